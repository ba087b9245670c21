import HTTPServer

/// Forward auth (`/auth/`): a reverse proxy asks, for each request to an application behind it, whether the browser
/// that made it is signed in here. Answers are one line of plain text at most and never cached; no rate limit
/// applies, since the proxy asks on every request the application gets.
struct ForwardAuthGroup: Sendable {
    let group: RouteGroup

    init(errors: ErrorMapping<PlainTextErrorPresenter>) {
        group = RouteGroup("forward-auth", owning: ["/auth/"], NeverStored(errors: errors))
    }

    func endpoint(_ handler: @escaping Router.Handler) -> Router.Route { group.route(handler) }

    /// Every answer names a person or says that none is signed in: no proxy or browser may keep it.
    struct NeverStored: RouteMiddleware {
        let errors: ErrorMapping<PlainTextErrorPresenter>

        func respond(to request: Request, next: (Request) throws -> Response) throws -> Response {
            var response = try errors.respond(to: request, next: next)
            response.headers.set("Cache-Control", "no-store")
            return response
        }
    }
}
