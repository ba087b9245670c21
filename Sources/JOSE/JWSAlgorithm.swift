/// The JWS algorithms this module implements. Any other `alg` value is refused by name.
public enum JWSAlgorithm: String, Sendable, CaseIterable {
    /// RSASSA-PKCS1-v1_5 with SHA-256: Apple's identity tokens.
    case RS256
    /// ECDSA P-256 with SHA-256: the client secret sent to Apple.
    case ES256
}
