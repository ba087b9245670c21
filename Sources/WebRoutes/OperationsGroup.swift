import BridgeMetrics
import BridgeSettings
import HTTPServer
import JOSE
import WebPresentation

/// Routes for machines and assets (`/healthz`, `/metrics`, `/public/`): errors as one line of plain text.
package struct OperationsGroup: Sendable {
    package let group: RouteGroup

    package init(errors: ErrorMapping<PlainTextErrorPresenter>, pages: PageAnswers) {
        group = RouteGroup("operations", owning: ["/public/"], Answers(errors: errors, pages: pages))
    }

    package func endpoint(_ handler: @escaping Router.Handler) -> Router.Route { group.route(handler) }

    /// An endpoint that, when `requiredToken` is set, answers only a request carrying it as a Bearer token.
    package func endpoint(requiringBearer requiredToken: String?, _ handler: @escaping Router.Handler) -> Router.Route {
        endpoint { request in
            if let requiredToken { try Self.checkBearer(request, requiredToken) }
            return try handler(request)
        }
    }

    /// RFC 6750 §3.1: a plain challenge when no token came, `invalid_token` when one came and is not it.
    package static func checkBearer(_ request: Request, _ requiredToken: String) throws(HTTPError) {
        guard let presented = request.bearerToken else {
            throw HTTPError(401, "This address requires a Bearer token.", headers: HTTPHeaders([("WWW-Authenticate", "Bearer")]))
        }
        guard ConstantTime.equals(presented, requiredToken) else {
            throw HTTPError(401, "The Bearer token is not valid here.",
                            headers: HTTPHeaders([("WWW-Authenticate", "Bearer error=\"invalid_token\"")]))
        }
    }

    /// Plain text, except that a person who followed a link to a missing file gets a page that fits a phone, not
    /// one line of text.
    package struct Answers: RouteMiddleware {
        package let errors: ErrorMapping<PlainTextErrorPresenter>
        package let pages: PageAnswers

        package init(errors: ErrorMapping<PlainTextErrorPresenter>, pages: PageAnswers) {
            self.errors = errors
            self.pages = pages
        }

        package func respond(to request: Request, next: (Request) -> Reply) -> Reply {
            errors.respond(to: request, next: next).then { [pages] outcome in
                guard case let .success(response) = outcome, response.status == 404,
                      request.path.utf8.starts(with: "/public/".utf8), Self.acceptsHTML(request) else { return Reply(outcome) }
                return pages.respond(to: request) { _ in .failure(HTTPError(404, "There is no file at this address.")) }
            }
        }

        /// A browser navigating asks for `text/html`; a stylesheet or image request does not.
        package static func acceptsHTML(_ request: Request) -> Bool {
            request.headers["Accept"]?.lowercased().contains("text/html") ?? false
        }
    }
}

extension OperationsGroup {
    /// Health, metrics (behind `BRIDGE_METRICS_TOKEN` when set), the site's logo and the files under `/public/`.
    package func register(on router: inout Router, metricsToken: String?, metrics: Metrics, operational: OperationalMetrics,
                          logo: SiteLogo?, staticFiles: StaticFiles) {
        router.add("GET", "/healthz", endpoint { _ in .json("{\"status\":\"ok\"}") })
        router.add("GET", "/metrics", endpoint(requiringBearer: metricsToken) { _ in
            var response = Response.text(metrics.prometheusText(collected: operational.samples()))
            response.headers.set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            return response
        })
        if let logo, logo.served != nil { router.add("GET", SiteLogo.servedPath, endpoint(logo.respond)) }
        router.addPrefix("GET", "/public/", endpoint { try staticFiles.respond(to: $0) })
    }
}
