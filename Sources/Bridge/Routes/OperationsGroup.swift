import HTTPServer
import JOSE

/// Routes for machines and assets (`/healthz`, `/metrics`, `/public/`): errors as one line of plain text.
struct OperationsGroup: Sendable {
    let errors: ErrorMapping<PlainTextErrorPresenter>

    func endpoint(_ handler: @escaping Router.Handler) -> Router.Handler {
        { [errors] request in try errors.respond(to: request, with: handler) }
    }

    /// An endpoint that, when `requiredToken` is set, answers only a request carrying it as a Bearer token.
    func endpoint(requiringBearer requiredToken: String?, _ handler: @escaping Router.Handler) -> Router.Handler {
        endpoint { request in
            if let requiredToken { try Self.checkBearer(request, requiredToken) }
            return try handler(request)
        }
    }

    /// RFC 6750 §3.1: a plain challenge when no token came, `invalid_token` when one came and is not it.
    static func checkBearer(_ request: Request, _ requiredToken: String) throws(HTTPError) {
        guard let presented = request.bearerToken else {
            throw HTTPError(401, "This address requires a Bearer token.", headers: HTTPHeaders([("WWW-Authenticate", "Bearer")]))
        }
        guard ConstantTime.equals(presented, requiredToken) else {
            throw HTTPError(401, "The Bearer token is not valid here.",
                            headers: HTTPHeaders([("WWW-Authenticate", "Bearer error=\"invalid_token\"")]))
        }
    }
}
