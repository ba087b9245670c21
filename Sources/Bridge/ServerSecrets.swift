import BridgeSettings
import JOSE

/// BRIDGE_SECRET_KEY and the keys derived from it with HKDF, one per purpose. Derivation either succeeds or stops
/// the start-up: there is no fallback to the raw key.
package struct ServerSecrets: Sendable {
    /// The configured secret itself.
    package let secretKey: [UInt8]
    /// Encrypts Apple refresh tokens at rest.
    package let appleTokenKey: [UInt8]
    /// Signs the `return_to` a login attempt carries in a cookie, bound to that attempt's state.
    package let returnDestinationKey: [UInt8]
    /// Seals the OpenID provider's private signing keys at rest.
    package let providerKeySealingKey: [UInt8]
    /// Seals a web login attempt into its `state` (`SealedLoginState`).
    package let loginStateKey: [UInt8]
    /// Signs CSRF tokens (derived from the session rather than stored): the secret itself, an HMAC key already.
    package var csrfKey: [UInt8] { secretKey }

    package init(secretKey: [UInt8]) throws(ConfigurationError) {
        self.secretKey = secretKey
        appleTokenKey = try Self.derive(secretKey, purpose: "apple-refresh-token-v1")
        returnDestinationKey = try Self.derive(secretKey, purpose: "return-destination-v1")
        providerKeySealingKey = try Self.derive(secretKey, purpose: "openid-provider-signing-key-v1")
        loginStateKey = try Self.derive(secretKey, purpose: "login-state-v1")
    }

    package static func derive(_ secretKey: [UInt8], purpose: String) throws(ConfigurationError) -> [UInt8] {
        do {
            return try HKDFSHA256.derive(key: secretKey, salt: Array("AppleSignInBridge".utf8), info: Array(purpose.utf8),
                                         length: 32)
        } catch {
            throw ConfigurationError("BRIDGE_SECRET_KEY", "cannot be used to derive the \(purpose) key: \(error)")
        }
    }
}
