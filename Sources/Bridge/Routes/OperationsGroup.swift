import HTTPServer
import JOSE

/// Routes for machines and assets (`/healthz`, `/metrics`, `/public/`): errors as one line of plain text.
struct OperationsGroup: Sendable {
    let group: RouteGroup

    init(errors: ErrorMapping<PlainTextErrorPresenter>, pages: PageAnswers) {
        group = RouteGroup("operations", owning: ["/public/"], Answers(errors: errors, pages: pages))
    }

    func endpoint(_ handler: @escaping Router.Handler) -> Router.Route { group.route(handler) }

    /// An endpoint that, when `requiredToken` is set, answers only a request carrying it as a Bearer token.
    func endpoint(requiringBearer requiredToken: String?, _ handler: @escaping Router.Handler) -> Router.Route {
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

    /// Plain text, except that a person who followed a link to a missing file gets a page that fits a phone, not
    /// one line of text.
    struct Answers: RouteMiddleware {
        let errors: ErrorMapping<PlainTextErrorPresenter>
        let pages: PageAnswers

        func respond(to request: Request, next: (Request) -> Reply) -> Reply {
            errors.respond(to: request, next: next).then { [pages] outcome in
                guard case let .success(response) = outcome, response.status == 404,
                      request.path.utf8.starts(with: "/public/".utf8), Self.acceptsHTML(request) else { return Reply(outcome) }
                return pages.respond(to: request) { _ in .failure(HTTPError(404, "There is no file at this address.")) }
            }
        }

        /// A browser navigating asks for `text/html`; a stylesheet or image request does not.
        static func acceptsHTML(_ request: Request) -> Bool {
            request.headers["Accept"]?.lowercased().contains("text/html") ?? false
        }
    }
}
