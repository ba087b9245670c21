import JOSE

/// Random bearer secrets (session ids, states, nonces, refresh tokens) and the digests stored in their place.
package enum SecretTokens {
    /// 256 random bits, base64url.
    package static func random() -> String { Base64URL.encode(SecureRandom.bytes(32)) }

    /// What is stored instead of a bearer secret: a copy of the database holds no live secret.
    package static func digest(_ secret: String) -> String { SHA256.hexDigest(Array(secret.utf8)) }
}
