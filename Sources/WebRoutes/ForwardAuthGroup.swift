import HTTPServer
import WebPresentation

/// Forward auth (`/auth/`): a reverse proxy asks, for each request to an application behind it, whether the browser
/// that made it is signed in here. Answers are one line of plain text at most and never cached; no rate limit
/// applies, since the proxy asks on every request the application gets.
package struct ForwardAuthGroup: Sendable {
    package let group: RouteGroup

    package init(errors: ErrorMapping<PlainTextErrorPresenter>) {
        // Every answer names a person or says that none is signed in: no proxy or browser may keep it.
        group = RouteGroup("forward-auth", owning: ["/auth/"], NeverStoredAnswers(errors: errors))
    }

    package func endpoint(_ handler: @escaping Router.Handler) -> Router.Route { group.route(handler) }
}

/// A group's errors in its shape, and every answer, errors included, `Cache-Control: no-store` (Apple's
/// notifications, forward auth).
package struct NeverStoredAnswers<Presenter: ErrorPresenter>: RouteMiddleware {
    package let errors: ErrorMapping<Presenter>

    package init(errors: ErrorMapping<Presenter>) {
        self.errors = errors
    }

    package func respond(to request: Request, next: (Request) -> Reply) -> Reply {
        errors.respond(to: request, next: next).map { response in
            var response = response
            response.headers.set("Cache-Control", "no-store")
            return response
        }
    }
}

extension ForwardAuthGroup {
    /// The question a reverse proxy asks before it lets a request through (docs/forward-auth.md).
    package func register(on router: inout Router, _ forwardAuth: ForwardAuth) {
        router.add("GET", "/auth/verify", endpoint(forwardAuth.verify))
    }
}
