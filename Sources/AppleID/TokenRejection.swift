/// Why a JWT Apple signed (an identity token or a server notification) was refused. Each case has a stable
/// code for logs and a sentence for people. None of them carries the token itself; values from the sender
/// are shortened and made printable.
public enum TokenRejection: Error, Equatable, Sendable, CustomStringConvertible {
    case malformed(String)
    case algorithmNotAllowed(String)
    case missingKeyID
    case unknownKeyID(String)
    case keysUnavailable
    case badSignature
    case wrongIssuer(String)
    case wrongAudience(String)
    case expired
    case issuedInFuture
    case issuedTooLongAgo
    case missingSubject
    case missingNonce
    case nonceMismatch
    case codeHashMismatch
    /// A time claim (named) that is not a number of seconds between 1970 and 9999.
    case invalidTime(String)
    /// `exp` lies further after `iat` than any token Apple issues lives.
    case lifetimeTooLong
    /// A notification whose event type this server does not know.
    case unknownEventType(String)

    /// A short, stable identifier (`wrong_audience`) for logs, metrics and JSON errors.
    public var code: String {
        switch self {
        case .malformed: "malformed_token"
        case .algorithmNotAllowed: "algorithm_not_allowed"
        case .missingKeyID: "missing_kid"
        case .unknownKeyID: "unknown_kid"
        case .keysUnavailable: "apple_keys_unavailable"
        case .badSignature: "bad_signature"
        case .wrongIssuer: "wrong_issuer"
        case .wrongAudience: "wrong_audience"
        case .expired: "token_expired"
        case .issuedInFuture: "issued_in_future"
        case .issuedTooLongAgo: "issued_too_long_ago"
        case .missingSubject: "missing_subject"
        case .missingNonce: "missing_nonce"
        case .nonceMismatch: "nonce_mismatch"
        case .codeHashMismatch: "code_hash_mismatch"
        case .invalidTime: "invalid_time_claim"
        case .lifetimeTooLong: "lifetime_too_long"
        case .unknownEventType: "unknown_event_type"
        }
    }

    /// The technical reason, safe to show and log.
    public var description: String {
        switch self {
        case let .malformed(reason): "the token is malformed: \(reason)"
        case let .algorithmNotAllowed(alg): "the token's algorithm \"\(alg)\" is not allowed (only RS256)"
        case .missingKeyID: "the token names no signing key (kid)"
        case let .unknownKeyID(kid): "the token's signing key \"\(kid)\" is not one of Apple's published keys"
        case .keysUnavailable: "Apple's signing keys could not be fetched"
        case .badSignature: "the token's signature does not verify"
        case let .wrongIssuer(issuer): "the token was issued by \"\(issuer)\", not Apple"
        case let .wrongAudience(audience): "the token is for \"\(audience)\", not this service"
        case .expired: "the token has expired"
        case .issuedInFuture: "the token claims to be issued in the future"
        case .issuedTooLongAgo: "the token was issued too long ago"
        case .missingSubject: "the token has no subject (sub)"
        case .missingNonce: "the token carries no nonce, but this sign-in requires one"
        case .nonceMismatch: "the token's nonce does not match this sign-in"
        case .codeHashMismatch: "the token's c_hash does not match the authorization code"
        case let .invalidTime(claim): "the token's \"\(claim)\" is not a time between 1970 and 9999"
        case .lifetimeTooLong: "the token's exp is further after its iat than any Apple token lives"
        case let .unknownEventType(type): "the notification's event type \"\(type)\" is not one this server knows"
        }
    }
}
