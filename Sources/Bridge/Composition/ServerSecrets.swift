import JOSE

/// The keys derived from BRIDGE_SECRET_KEY, one per purpose, so no two uses ever share a key.
/// Derivation either succeeds or stops the start-up: there is no fallback to the raw key.
struct ServerSecrets: Sendable {
    /// The configured secret itself; the access tokens derive their own key from it.
    let secretKey: [UInt8]
    /// Encrypts Apple refresh tokens at rest.
    let appleTokenKey: [UInt8]
    /// Signs CSRF tokens, which are derived from the session rather than stored.
    var csrfKey: [UInt8] { secretKey }

    init(secretKey: [UInt8]) throws(ConfigurationError) {
        self.secretKey = secretKey
        appleTokenKey = try Self.derive(secretKey, purpose: "apple-refresh-token-v1")
    }

    static func derive(_ secretKey: [UInt8], purpose: String) throws(ConfigurationError) -> [UInt8] {
        do {
            return try HKDFSHA256.derive(key: secretKey, salt: Array("AppleSignInBridge".utf8), info: Array(purpose.utf8),
                                         length: 32)
        } catch {
            throw ConfigurationError("BRIDGE_SECRET_KEY", "cannot be used to derive the \(purpose) key: \(error)")
        }
    }
}
