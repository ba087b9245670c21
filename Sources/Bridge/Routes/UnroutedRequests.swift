import HTTPServer
import Localization

/// The router inside, and for what no route answered (the router's own 404 and 405) the error shape of the group
/// the path belongs to: JSON under `/api/` and `/apple/`, plain text for the operational routes, pages elsewhere.
/// Pages are answered in the request's language (`?lang=`, the remembered choice, or `Accept-Language`); the JSON
/// API stays English.
struct UnroutedRequests: HTTPResponder {
    let router: Router
    let pageErrors: ErrorMapping<WebErrorPresenter>
    let jsonErrors: ErrorMapping<JSONErrorPresenter>
    let plainTextErrors: ErrorMapping<PlainTextErrorPresenter>
    let languages: LanguageNegotiation

    func respond(to request: Request) throws -> Response {
        let route: Router.Handler = { [router] in try router.respond(to: $0) }
        if Self.isJSONPath(request.path) { return try jsonErrors.respond(to: request, with: route) }
        if Self.isOperationsPath(request.path) {
            let response = try plainTextErrors.respond(to: request, with: route)
            guard response.status == 404, request.path.hasPrefix("/public/"), Self.acceptsHTML(request) else { return response }
            // A person who followed a link to a missing file gets a page that fits a phone, not one line of text.
            return try LanguageSelection<Router>.respond(to: request, negotiation: languages) { request in
                try pageErrors.respond(to: request) { _ in throw HTTPError(404, "There is no file at this address.") }
            }
        }
        return try LanguageSelection<Router>.respond(to: request, negotiation: languages) { request in
            try pageErrors.respond(to: request, with: route)
        }
    }

    static func isJSONPath(_ path: String) -> Bool { path.hasPrefix("/api/") || path.hasPrefix("/apple/") }

    static func isOperationsPath(_ path: String) -> Bool {
        path.hasPrefix("/public/") || path == "/healthz" || path == "/metrics"
    }

    /// A browser navigating asks for `text/html`; a stylesheet or image request does not.
    static func acceptsHTML(_ request: Request) -> Bool {
        request.headers["Accept"]?.lowercased().contains("text/html") ?? false
    }
}
