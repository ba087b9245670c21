import HTTPServer

/// Routes for machines and assets (`/healthz`, `/metrics`, `/public/`): errors as one line of plain text.
struct OperationsGroup: Sendable {
    let errors: ErrorMapping<PlainTextErrorPresenter>

    func endpoint(_ handler: @escaping Router.Handler) -> Router.Handler {
        { [errors] request in try errors.respond(to: request, with: handler) }
    }
}
