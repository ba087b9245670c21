import HTTPServer

/// Errors of the operational routes (`/healthz`, `/metrics`, `/public/`) as one line of plain text: their clients
/// are probes, scrapers and stylesheets, not people.
package struct PlainTextErrorPresenter: ErrorPresenter {

    package init() {
    }
    package func response(for error: any Error, to request: Request) -> Response? {
        if StoreOutage.isOutage(error) {
            var response = Response.text("The database cannot be reached right now; try again shortly.\n", status: 503)
            response.headers.set("Retry-After", String(StoreOutage.retryAfterSeconds))
            return response
        }
        guard let error = error as? HTTPError else { return nil }
        // Its headers go along: a 405's Allow, a 401's WWW-Authenticate.
        var response = Response.text(error.message + "\n", status: error.status)
        for field in error.headers { response.headers.set(field.name, field.value) }
        return response
    }

    package func internalError(for request: Request) -> Response {
        .text("The server could not answer this request. Please try again.\n", status: 500)
    }
}
