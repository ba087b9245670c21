import HTTPServer
import JSON

/// An OAuth 2.0 error answered as RFC 6749 §5.2 JSON (`error`, `error_description`), never cached.
package struct OAuthRefusal: Error, Equatable {
    package var status: Int
    package var error: String
    package var description: String
    /// The replay the token endpoint's transaction found (and answered by revoking what it had issued): counted and
    /// logged once that committed.
    package var replay: Replay? = nil

    package init(status: Int, error: String, description: String, replay: Replay? = nil) {
        self.status = status
        self.error = error
        self.description = description
        self.replay = replay
    }

    package enum Replay: Equatable {
        case code(clientID: String)
        case refreshToken
    }

    package static func invalidRequest(_ description: String) -> OAuthRefusal { .init(status: 400, error: "invalid_request", description: description) }
    package static func invalidGrant(_ description: String) -> OAuthRefusal { .init(status: 400, error: "invalid_grant", description: description) }
    package static func invalidScope(_ description: String) -> OAuthRefusal { .init(status: 400, error: "invalid_scope", description: description) }
    package static func invalidClient(_ description: String) -> OAuthRefusal { .init(status: 401, error: "invalid_client", description: description) }
    package static func invalidToken(_ description: String) -> OAuthRefusal { .init(status: 401, error: "invalid_token", description: description) }
    /// No credentials at all: RFC 6750 §3.1 sends no error code then.
    package static func missingToken(_ description: String) -> OAuthRefusal { .init(status: 401, error: "invalid_request", description: description) }
    package static func insufficientScope(_ description: String) -> OAuthRefusal {
        .init(status: 403, error: "insufficient_scope", description: description)
    }

    package var response: Response {
        var response = Response.json(JSONValue.object(["error": .string(error), "error_description": .string(description)])
            .serialized(), status: status)
        response.headers.set("Cache-Control", "no-store")
        if error == "invalid_client" { response.headers.set("WWW-Authenticate", "Basic realm=\"token\"") }
        if error == "invalid_token" { response.headers.set("WWW-Authenticate", "Bearer error=\"invalid_token\"") }
        if error == "insufficient_scope" { response.headers.set("WWW-Authenticate", "Bearer error=\"insufficient_scope\", scope=\"openid\"") }
        if status == 401 && error == "invalid_request" { response.headers.set("WWW-Authenticate", "Bearer") }
        return response
    }
}
