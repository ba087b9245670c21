/// What runs around every answer of a group's routes (Hummingbird's `RouterMiddleware`, synchronous): on the first
/// pass of a request, and again when a suspended request resumes with the rest of its work, so whatever it does to
/// errors and responses (their shape, `no-store`, CORS) applies to all that the group answers.
public protocol RouteMiddleware: Sendable {
    func respond(to request: Request, next: (Request) throws -> Response) throws -> Response
}

/// Nothing around the handler: its errors reach the listener, which answers an `HTTPError` as plain text.
public struct NoMiddleware: RouteMiddleware {
    public init() {}
    public func respond(to request: Request, next: (Request) throws -> Response) throws -> Response { try next(request) }
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

    /// A route of this group. `handler` runs once per request, inside the group's middleware; after a suspension
    /// the router runs the rest of the work in its place, so its steps (authentication, a rate limit, parsing)
    /// never run twice and it never needs to know about suspensions.
    public func route(_ handler: @escaping Router.Handler) -> Router.Route { Router.Route(group: self, handler: handler) }

    /// `error` answered the way this group answers, as a request for `path` would get it.
    public func refusal(_ error: HTTPError, for path: String) -> Response {
        do {
            return try middleware.respond(to: Request(method: "GET", path: path)) { _ in throw error }
        } catch let error as HTTPError {
            return error.plainTextResponse
        } catch {
            return HTTPError(500, "The server could not answer this request.").plainTextResponse
        }
    }
}
