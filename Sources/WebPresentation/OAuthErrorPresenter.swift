import HTTPServer

/// Errors of the OpenID provider's JSON endpoints as RFC 6749 §5.2 JSON (`error`, `error_description`, `no-store`):
/// its own refusals as they are, and the rest (no route, wrong method, a body too large, the rate limit, a busy
/// server or database) with the RFC's nearest code and the JSON API's words for it.
package struct OAuthErrorPresenter: ErrorPresenter {

    package init() {
    }
    package func response(for error: any Error, to request: Request) -> Response? {
        if let refusal = error as? OAuthRefusal { return refusal.response }
        guard let body = JSONErrorPresenter.body(for: error) else { return nil }
        var response = OAuthRefusal(status: body.status, error: Self.error(forStatus: body.status),
                                    description: body.message).response
        // A 405's Allow, a 429's or 503's Retry-After.
        for field in body.headers { response.headers.set(field.name, field.value) }
        return response
    }

    package func internalError(for request: Request) -> Response {
        OAuthRefusal(status: 500, error: "server_error", description: "The server could not answer this request.").response
    }

    /// RFC 6749 has no code per status: `temporarily_unavailable` (§4.1.2.1) for a server that cannot answer now,
    /// `server_error` for one that failed, and `invalid_request` for a request this server will not take as sent.
    package static func error(forStatus status: Int) -> String {
        switch status {
        case 429, 503: "temporarily_unavailable"
        case 500...: "server_error"
        default: "invalid_request"
        }
    }
}
