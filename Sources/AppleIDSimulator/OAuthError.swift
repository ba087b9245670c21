import HTTPServer
import JOSE
import JSON

/// An error answer of the token and revoke endpoints: 400 with Apple's JSON shape.
struct OAuthError: Error, Sendable {
    let code: String
    let description: String
    var status = 400

    static func invalidRequest(_ description: String) -> OAuthError { OAuthError(code: "invalid_request", description: description) }
    static func invalidClient(_ description: String) -> OAuthError { OAuthError(code: "invalid_client", description: description) }
    static func invalidGrant(_ description: String) -> OAuthError { OAuthError(code: "invalid_grant", description: description) }

    var response: Response {
        var response = Response.json(JSONValue.object(["error": .string(code), "error_description": .string(description)]).serialized(),
                                     status: status)
        response.headers.set("Cache-Control", "no-store")
        return response
    }
}
