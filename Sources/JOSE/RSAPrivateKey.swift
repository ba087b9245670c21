import JSON
internal import COpenSSL

/// An RSA private key that signs RS256; used by the local Apple ID simulator and tests.
public final class RSAPrivateKey: @unchecked Sendable {
    /// Owned.
    private let key: OpaquePointer
    public let publicKey: RSAPublicKey

    /// A new random key (2048 to 8192 bits).
    public static func generate(bits: Int = 2048) throws(JOSEError) -> RSAPrivateKey {
        guard (RSAPublicKey.minimumModulusBits...RSAPublicKey.maximumModulusBits).contains(bits) else {
            throw .invalidKey("RSA key size must be \(RSAPublicKey.minimumModulusBits)...\(RSAPublicKey.maximumModulusBits) bits")
        }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, OpenSSLNames.rsa, nil) else {
            throw OpenSSLErrorQueue.failure("allocating an RSA key generation context")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1,
              EVP_PKEY_CTX_set_rsa_keygen_bits(context, Int32(bits)) == 1,
              EVP_PKEY_generate(context, &key) == 1,
              let key
        else {
            throw OpenSSLErrorQueue.failure("generating an RSA key")
        }
        return try RSAPrivateKey(adopting: key)
    }

    /// From PEM: PKCS#8 ("PRIVATE KEY") or traditional ("RSA PRIVATE KEY"); not encrypted.
    public convenience init(pem: String) throws(JOSEError) {
        let key = try PEM.readPrivateKey(pem)
        guard EVP_PKEY_is_a(key, "RSA") == 1 else {
            EVP_PKEY_free(key)
            throw .invalidKey("PEM key is not an RSA private key")
        }
        try self.init(adopting: key)
    }

    /// Takes over `key` (freed on failure too).
    private init(adopting key: OpaquePointer) throws(JOSEError) {
        do {
            publicKey = try RSAPublicKey(
                modulus: EVPKeyParameters.bigNumber(key, OSSL_PKEY_PARAM_RSA_N),
                exponent: EVPKeyParameters.bigNumber(key, OSSL_PKEY_PARAM_RSA_E))
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

    /// The public half as a JWK: kty, kid, use=sig, alg=RS256, n, e.
    public func publicJWK(keyID: String) -> JSONValue {
        publicKey.jwk(keyID: keyID)
    }

    /// An RSASSA-PKCS1-v1_5 SHA-256 signature, as long as the modulus.
    public func signRS256(_ message: some Collection<UInt8>) throws(JOSEError) -> [UInt8] {
        try withContiguousBytes(message) { message throws(JOSEError) in
            try EVPDigestSignature.sign(message, with: key)
        }
    }
}
