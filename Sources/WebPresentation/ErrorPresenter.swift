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

    package func respond(to request: Request, next: (Request) throws -> Response) throws -> Response {
        do {
            return try next(request)
        }
        // Every group's errors pass through this one `do`, and only an error the HTTP server acts on itself may leave
        // it (`ListenerDirective`): run this request again off the listener threads, or suspend it until the work
        // it started elsewhere (a group commit) calls back.
        // The suspension first, as its concrete type: a cast to the protocol costs four times as much, and every
        // sign-in passes one through here.
        catch let suspended as RequestSuspended {
            throw suspended
        } catch let error as ListenerDirective {
            throw error
        } catch {
            if let error = error as? StoreError {
                metrics?.increment("bridge_database_errors_total", ["kind": StoreOutage.isOutage(error) ? "unavailable" : "error"])
            }
            if let response = presenter.response(for: error, to: request) { return response }
            logger.error("unhandled_error", ["path": request.path, "error": String(describing: type(of: error))])
            return presenter.internalError(for: request)
        }
    }
}
