/// The JWS algorithms this module implements. Any other `alg` value is refused by name.
public enum JWSAlgorithm: String, Sendable, CaseIterable {
    /// RSASSA-PKCS1-v1_5 with SHA-256: Apple's identity tokens.
    case RS256
    /// ECDSA P-256 with SHA-256: the client secret sent to Apple.
    case ES256
    /// HMAC with SHA-256: only for tokens a service signs and checks with its own secret (`HS256Key`).
    /// Never list it next to a public-key algorithm: that is the key-confusion attack.
    case HS256
}
