import AppleID
import HTTPServer
import JOSE
import JSON
import SignIn
import Storage

/// Turns what a JSON route threw into `{"error": code, "message": text}` with its status: the one table of the
/// API's error codes and messages. Messages are for an app's developer, not for the person using the app.
package struct JSONErrorPresenter: ErrorPresenter {

    package init() {
    }
    /// One JSON error, before it is serialised.
    package struct Body {
        package var status: Int
        package var code: String
        package var message: String

        package var headers = HTTPHeaders()

        package init(status: Int, code: String, message: String, headers: HTTPHeaders = HTTPHeaders()) {
            self.status = status
            self.code = code
            self.message = message
            self.headers = headers
        }

        package var response: Response {
            let json = JSONValue.object(["error": .string(code), "message": .string(message)]).serialized()
            var response = Response.json(json, status: status)
            response.headers.set("Cache-Control", "no-store")
            for field in headers { response.headers.set(field.name, field.value) }
            return response
        }
    }

    package func response(for error: any Error, to request: Request) -> Response? {
        guard var body = Self.body(for: error) else { return nil }
        // Every 503 here means Apple is slow or unreachable: worth trying again after the breaker's cool-down.
        if body.status == 503 && !body.headers.contains("Retry-After") {
            body.headers.set("Retry-After", String(AppleServices.retryAfterSeconds))
        }
        return body.response
    }

    package func internalError(for request: Request) -> Response {
        Body(status: 500, code: "internal_error", message: "The server could not answer this request. Please try again.").response
    }

    package static func body(for error: any Error) -> Body? {
        switch error {
        case let error as APIError: body(forAPIError: error)
        case let failure as SignInFailure: body(forSignInFailure: failure)
        case let error as StoreError where StoreOutage.isOutage(error):
            Body(status: 503, code: "service_unavailable", message: "The database cannot be reached right now; try again shortly.",
                 headers: StoreOutage.retryAfter)
        case let limited as RateLimited:
            Body(status: 429, code: "rate_limited", message: "Too many requests; try again in \(limited.retryAfter) seconds.",
                 headers: HTTPHeaders([("Retry-After", String(limited.retryAfter))]))
        case let error as HTTPError:
            Body(status: error.status, code: HTTPErrorCode.code(for: error.status), message: error.message, headers: error.headers)
        default: nil
        }
    }

    package static func body(forAPIError error: APIError) -> Body {
        switch error {
        case .missingIDToken:
            Body(status: 400, code: "missing_id_token", message: "The identity token is missing: send it as idToken (or identityToken, id_token, token).")
        case .invalidDeviceID: Body(status: 400, code: "invalid_device_id", message: "deviceId is longer than 200 code points.")
        case .subjectMismatch:
            Body(status: 401, code: "subject_mismatch", message: "The user identifier sent with the request is not the token's subject.")
        case .missingRefreshToken: Body(status: 400, code: "missing_refresh_token", message: "Send the refresh token as refreshToken.")
        case .refreshTokenReused:
            Body(status: 401, code: "refresh_token_reused", message: "This refresh token was already used, so every token of this sign-in has been revoked. Sign in again.")
        case .invalidRefreshToken:
            Body(status: 401, code: "invalid_refresh_token", message: "The refresh token is unknown, expired or revoked. Sign in again.")
        case .missingAccessToken:
            Body(status: 401, code: "unauthorized", message: "A valid access token is required (Authorization: Bearer …).",
                 headers: HTTPHeaders([("WWW-Authenticate", "Bearer")]))
        case .invalidAccessToken:
            // RFC 6750 §3.1: a token was presented and refused.
            Body(status: 401, code: "unauthorized", message: "The access token is invalid or expired, or its sign-in has ended.",
                 headers: HTTPHeaders([("WWW-Authenticate", "Bearer error=\"invalid_token\"")]))
        case let .insufficientScope(message):
            Body(status: 403, code: "insufficient_scope", message: message,
                 headers: HTTPHeaders([("WWW-Authenticate", "Bearer error=\"insufficient_scope\"")]))
        case .unsupportedMediaType:
            Body(status: 415, code: "unsupported_media_type", message: "Send the request body as JSON (Content-Type: application/json).")
        case .malformedJSON: Body(status: 400, code: "malformed_json", message: "The request body is not a JSON object.")
        case let .notificationRejected(rejection):
            // 503 when Apple's keys cannot be had, so Apple delivers again later; anything else is a bad event.
            rejection == .keysUnavailable
                ? Body(status: 503, code: "apple_keys_unavailable", message: sentence(rejection.description))
                : Body(status: 400, code: "invalid_notification", message: sentence(rejection.description))
        }
    }

    package static func body(forSignInFailure failure: SignInFailure) -> Body {
        switch failure {
        case let .tokenRejected(rejection):
            Body(status: rejection == .keysUnavailable ? 503 : 401, code: rejection.code, message: sentence(rejection.description))
        case .codeExchange(.missingCode):
            Body(status: 400, code: "missing_authorization_code", message: "This server requires the authorization code: send it as authorizationCode.")
        case .codeExchange(.appleUnavailable):
            Body(status: 503, code: "code_exchange_unavailable", message: "Apple could not be reached to confirm the authorization code; try again.")
        case .codeExchange(.serverMisconfigured):
            Body(status: 502, code: "apple_rejected_server", message: "Apple did not accept this server's credentials; the operators must fix the configuration (apple-signin-bridge doctor).")
        case .codeExchange(.codeRefused):
            Body(status: 401, code: "code_exchange_failed", message: "Apple did not accept the authorization code (expired, used, or for another app).")
        case .tokenReplayed:
            Body(status: 409, code: "token_replayed", message: "This identity token was already used to sign in. Sign in with Apple again to get a new one.")
        case .loginAttemptAlreadyUsed: Body(status: 400, code: "state_used", message: "This sign-in was already used.")
        case .nonceExpired: Body(status: 401, code: "nonce_expired", message: "The nonce has expired; request a new one from /api/auth/nonce.")
        case .nonceAlreadyUsed: Body(status: 409, code: "nonce_already_used", message: "This nonce was already used for a sign-in.")
        case .nonceRequired:
            Body(status: 401, code: "nonce_required", message: "This token carries a nonce: send the value it was made from as nonce (a token for the web Services ID needs one from /api/auth/nonce).")
        case .nonceNotSent:
            Body(status: 401, code: "nonce_required", message: "This token carries a nonce but the request has no nonce field: send the value the token was made from as nonce, or have the operator set APPLE_ACCEPT_UNSENT_NONCE=1 to accept such tokens as not nonce-verified.")
        }
    }

    /// A lower-case technical reason as a sentence: capitalised, ending in a full stop.
    package static func sentence(_ reason: String) -> String {
        guard let first = reason.first else { return reason }
        return first.uppercased() + reason.dropFirst() + (reason.hasSuffix(".") ? "" : ".")
    }
}
