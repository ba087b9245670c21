/// What runs around every answer of a group's routes (Hummingbird's `RouterMiddleware`, synchronous). It runs once
/// per request and transforms the handler's `Reply` with `map`, `recover`, `then` and `within`, which apply to
/// whatever of the answer follows later too (off the listener, after a commit), so whatever it does to errors and
/// responses (their shape, `no-store`, CORS) applies to all that the group answers, with no regard to threads.
public protocol RouteMiddleware: Sendable {
    func respond(to request: Request, next: (Request) -> Reply) -> Reply
}

/// Nothing around the handler: its errors reach the listener, which answers an `HTTPError` as plain text.
public struct NoMiddleware: RouteMiddleware {
    public init() {}
    public func respond(to request: Request, next: (Request) -> Reply) -> Reply { next(request) }
}

/// Routes that answer alike, and the path prefixes they own. Registering a route made by `route(_:)` places its path
/// in this group; a path under one of `prefixes` that no route takes is answered 404 or 405 by this group too, and
/// so is a refusal the listener makes for it (see `Router.group(owning:)`).
public final class RouteGroup: Sendable {
    public let name: String
    public let prefixes: [String]
    let middleware: any RouteMiddleware

    public init(_ name: String, owning prefixes: [String] = [], _ middleware: some RouteMiddleware) {
        self.name = name
        self.prefixes = prefixes
        self.middleware = middleware
    }

    /// A route of this group that answers now. `handler` runs once per request, inside the group's middleware.
    public func route(_ handler: @escaping Router.Handler) -> Router.Route {
        Router.Route(group: self, handler: { Reply(try handler($0)) })
    }

    /// A route of this group whose answer may follow later (see `Reply`): `handler` runs once per request, and what
    /// follows gets what it parsed and checked, inside the group's middleware too.
    public func route(replying handler: @escaping Router.ReplyHandler) -> Router.Route {
        Router.Route(group: self, handler: handler)
    }

    /// `error` answered the way this group answers, as a request for `path` would get it.
    public func refusal(_ error: HTTPError, for path: String) -> Response {
        do {
            return try middleware.respond(to: Request(method: "GET", path: path)) { _ in .failure(error) }.wait()
        } catch let error as HTTPError {
            return error.plainTextResponse
        } catch {
            return HTTPError(500, "The server could not answer this request.").plainTextResponse
        }
    }
}
