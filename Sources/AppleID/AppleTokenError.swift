/// Why a code exchange or revocation at Apple failed, in words that say what to check.
/// No case carries an authorization code, a token or the client secret.
public enum AppleTokenError: Error, CustomStringConvertible, Equatable, Sendable {
    /// Apple answered with an OAuth error (`invalid_client`, `invalid_grant`, …).
    case apple(code: String, advice: String)
    /// No answer, a timeout, or 5xx on every attempt.
    case unreachable(String)
    /// Apple was not called: too many calls in flight, or Apple kept failing and the breaker is open.
    case notAttempted(String)
    /// An answer that is not what the endpoint documents.
    case invalidResponse(String)
    /// The id_token Apple returned did not verify.
    case idTokenRejected(TokenRejection)
    /// The id_token Apple returned names another user than the sign-in's identity token.
    case subjectMismatch
    /// The client secret could not be signed.
    case clientSecretUnavailable(String)

    /// An `.apple` error for an OAuth error code, with advice for the codes Apple documents.
    public static func fromApple(code: String) -> AppleTokenError {
        .apple(code: code, advice: advice(for: code))
    }

    public static func advice(for code: String) -> String {
        switch code {
        case "invalid_client":
            "Apple refused the client secret: check APPLE_TEAM_ID, APPLE_KEY_ID and the .p8 key, and that the client_id (the Services ID for web sign-ins, the bundle ID for apps) is the one the key is enabled for"
        case "invalid_grant":
            "the authorization code is expired (5 minutes), already used, or was issued to another client_id or redirect_uri"
        case "invalid_request":
            "Apple found a parameter missing or malformed: web codes need redirect_uri exactly as registered for the Services ID, native codes must be sent without it"
        case "unauthorized_client":
            "the client_id may not use this grant: check that Sign in with Apple is enabled for the Services ID or App ID and that the key belongs to the same team"
        case "unsupported_grant_type":
            "Apple does not support the grant_type sent (only authorization_code and refresh_token)"
        case "invalid_scope":
            "Apple refused the requested scope: only name and email exist"
        default:
            "Apple answered with an error this server does not know; see Apple's documentation for it"
        }
    }

    public var description: String {
        switch self {
        case let .apple(code, advice): "Apple refused the request (\(code)): \(advice)"
        case let .unreachable(reason): "Apple could not be reached or is failing: \(reason)"
        case let .notAttempted(reason): "Apple was not called: \(reason)"
        case let .invalidResponse(reason): "Apple's answer could not be used: \(reason)"
        case let .idTokenRejected(rejection): "the id_token Apple returned was refused: \(rejection.description)"
        case .subjectMismatch: "the id_token Apple returned is for another user (sub) than this sign-in's identity token"
        case let .clientSecretUnavailable(reason): "the client secret could not be signed: \(reason)"
        }
    }
}
