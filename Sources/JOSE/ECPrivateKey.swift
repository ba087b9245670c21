import JSON
internal import COpenSSL

/// A P-256 private key that signs ES256, e.g. Apple's `.p8` key for the client secret.
public final class ECPrivateKey: @unchecked Sendable {
    /// Owned.
    private let key: OpaquePointer
    public let publicKey: ECPublicKey

    /// A new random P-256 key.
    public static func generate() throws(JOSEError) -> ECPrivateKey {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, OpenSSLNames.ec, nil) else {
            throw OpenSSLErrorQueue.failure("allocating an EC key generation context")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1,
              EVP_PKEY_CTX_set_group_name(context, OpenSSLNames.prime256v1) == 1,
              EVP_PKEY_generate(context, &key) == 1,
              let key
        else {
            throw OpenSSLErrorQueue.failure("generating a P-256 key")
        }
        return try ECPrivateKey(adopting: key)
    }

    /// From PEM: PKCS#8 ("PRIVATE KEY", the `.p8` format Apple issues) or "EC PRIVATE KEY";
    /// not encrypted. Keys on any curve other than P-256 are refused.
    public convenience init(pem: String) throws(JOSEError) {
        let key = try PEM.readPrivateKey(pem)
        try P256.requireP256(key, role: "PEM private key")
        try self.init(adopting: key)
    }

    /// Takes over `key` (freed on failure too).
    private init(adopting key: OpaquePointer) throws(JOSEError) {
        do {
            let point = try P256.publicPoint(of: key)
            publicKey = ECPublicKey(adopting: try EVPKeyBuilder.p256PublicKey(point: point))
        } catch {
            EVP_PKEY_free(key)
            throw error
        }
        self.key = key
    }

    deinit {
        EVP_PKEY_free(key)
    }

    /// Unencrypted PKCS#8 PEM ("-----BEGIN PRIVATE KEY-----").
    public func pemString() throws(JOSEError) -> String {
        try PEM.writePrivateKey(key)
    }

    /// The public half as a JWK.
    public func publicJWK(keyID: String) throws(JOSEError) -> JSONValue {
        try publicKey.jwk(keyID: keyID)
    }

    /// An ES256 signature in JWS form: r ‖ s, each left-padded to 32 bytes (64 in all).
    public func signES256(_ message: some Collection<UInt8>) throws(JOSEError) -> [UInt8] {
        let der = try withContiguousBytes(message) { message throws(JOSEError) in
            try EVPDigestSignature.sign(message, with: key)
        }
        return try ECDSASignatureFormat.raw(fromDER: der, coordinateSize: P256.coordinateSize)
    }
}
