import HTTPServer

/// The router inside, and for what no route answered (the router's own 404 and 405) the error shape of the group
/// the path belongs to: JSON under `/api/` and `/apple/`, plain text for the operational routes, pages elsewhere.
struct UnroutedRequests: HTTPResponder {
    let router: Router
    let pageErrors: ErrorMapping<WebErrorPresenter>
    let jsonErrors: ErrorMapping<JSONErrorPresenter>
    let plainTextErrors: ErrorMapping<PlainTextErrorPresenter>

    func respond(to request: Request) throws -> Response {
        let route: Router.Handler = { [router] in try router.respond(to: $0) }
        if Self.isJSONPath(request.path) { return try jsonErrors.respond(to: request, with: route) }
        if Self.isOperationsPath(request.path) { return try plainTextErrors.respond(to: request, with: route) }
        return try pageErrors.respond(to: request, with: route)
    }

    static func isJSONPath(_ path: String) -> Bool { path.hasPrefix("/api/") || path.hasPrefix("/apple/") }

    static func isOperationsPath(_ path: String) -> Bool {
        path.hasPrefix("/public/") || path == "/healthz" || path == "/metrics"
    }
}
