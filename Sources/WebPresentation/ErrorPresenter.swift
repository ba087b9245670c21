import BridgeMetrics
import HTTPServer
import Logging
import Storage

/// How one route group shows errors: a response for each error it knows, and one for everything else.
package protocol ErrorPresenter: Sendable {
    /// The response for an error this group knows; nil for any other.
    func response(for error: any Error, to request: Request) -> Response?
    /// The answer to an error nobody expected (a bug, a database failure).
    func internalError(for request: Request) -> Response
}

/// Wraps a group's routes: every error they throw becomes the group's response. An error nobody expected is logged
/// by its type only (never request data) and answered as an internal error.
/// A database error is also counted in `bridge_database_errors_total`.
package struct ErrorMapping<Presenter: ErrorPresenter>: RouteMiddleware {
    package let presenter: Presenter
    package let logger: Logger
    package var metrics: Metrics?

    package init(presenter: Presenter, logger: Logger, metrics: Metrics? = nil) {
        self.presenter = presenter
        self.logger = logger
        self.metrics = metrics
    }

    package func respond(to request: Request, next: (Request) -> Reply) -> Reply {
        next(request).recover { [self] error in present(error, to: request) }
    }

    package func present(_ error: any Error, to request: Request) -> Response {
        if let error = error as? StoreError {
            metrics?.increment("bridge_database_errors_total", ["kind": StoreOutage.isOutage(error) ? "unavailable" : "error"])
        }
        if let response = presenter.response(for: error, to: request) { return response }
        logger.error("unhandled_error", ["path": request.path, "error": String(describing: type(of: error))])
        return presenter.internalError(for: request)
    }
}
