import JSON
internal import COpenSSL

/// An RSA public key that verifies RS256 signatures. Safe to share between threads and
/// meant to be kept: building it costs far more than a verify.
public final class RSAPublicKey: @unchecked Sendable {
    /// Smaller moduli are refused (RFC 7518 §3.3 requires at least 2048 bits).
    public static let minimumModulusBits = 2048
    /// Larger moduli are refused, so a hostile JWKS cannot make every verify slow.
    public static let maximumModulusBits = 8192

    /// Owned, public part only.
    private let key: OpaquePointer
    private let verifier: RS256VerifyTemplate
    /// Big-endian modulus bytes, without leading zeros.
    public let modulus: [UInt8]
    /// Big-endian public exponent bytes, without leading zeros.
    public let exponent: [UInt8]
    public let modulusBits: Int

    /// From big-endian modulus and exponent bytes (as in a JWK's `n` and `e`).
    public convenience init(modulus n: [UInt8], exponent e: [UInt8]) throws(JOSEError) {
        let modulus = Array(n.drop { $0 == 0 })
        let exponent = Array(e.drop { $0 == 0 })
        let bits = modulus.isEmpty ? 0 : modulus.count * 8 - modulus[0].leadingZeroBitCount
        guard bits >= Self.minimumModulusBits else {
            throw .invalidKey("RSA modulus has \(bits) bits; at least \(Self.minimumModulusBits) are required")
        }
        guard bits <= Self.maximumModulusBits else {
            throw .invalidKey("RSA modulus has \(bits) bits; at most \(Self.maximumModulusBits) are accepted")
        }
        guard modulus.last! & 1 == 1 else { throw .invalidKey("RSA modulus is even") }
        guard !exponent.isEmpty, exponent.count <= 8, exponent.last! & 1 == 1, exponent != [1] else {
            throw .invalidKey("RSA public exponent must be an odd number greater than 1 of at most 64 bits")
        }
        let key = try EVPKeyBuilder.rsaPublicKey(modulus: modulus, exponent: exponent)
        try self.init(adopting: key, modulus: modulus, exponent: exponent, modulusBits: bits)
    }

    /// From a JWK object: `kty` must be `RSA`; `use`, if present, `sig`; `alg`, if present, `RS256`.
    public convenience init(jwk: JSONValue) throws(JOSEError) {
        guard case .object = jwk else { throw .invalidKey("JWK is not a JSON object") }
        guard jwk["kty"]?.stringValue == "RSA" else { throw .invalidKey("JWK kty is not \"RSA\"") }
        if let use = jwk["use"], use.stringValue != "sig" { throw .invalidKey("JWK use is not \"sig\"") }
        if let alg = jwk["alg"], alg.stringValue != JWSAlgorithm.RS256.rawValue { throw .invalidKey("JWK alg is not \"RS256\"") }
        guard let n = jwk["n"]?.stringValue.flatMap({ Base64URL.decode($0) }) else {
            throw .invalidKey("JWK n is missing or not base64url")
        }
        guard let e = jwk["e"]?.stringValue.flatMap({ Base64URL.decode($0) }) else {
            throw .invalidKey("JWK e is missing or not base64url")
        }
        try self.init(modulus: n, exponent: e)
    }

    /// From a "PUBLIC KEY" (SubjectPublicKeyInfo) PEM holding an RSA key.
    public convenience init(pem: String) throws(JOSEError) {
        let key = try PEM.readPublicKey(pem)
        guard EVP_PKEY_is_a(key, "RSA") == 1 else {
            EVP_PKEY_free(key)
            throw .invalidKey("PEM key is not an RSA key")
        }
        let parameters: (n: [UInt8], e: [UInt8])
        do {
            defer { EVP_PKEY_free(key) }
            parameters = (try EVPKeyParameters.bigNumber(key, OSSL_PKEY_PARAM_RSA_N), try EVPKeyParameters.bigNumber(key, OSSL_PKEY_PARAM_RSA_E))
        }
        // Rebuilt from n and e so that the size and exponent checks apply.
        try self.init(modulus: parameters.n, exponent: parameters.e)
    }

    /// Takes over `key`, built from the given, already checked parameters (freed on failure too).
    private init(adopting key: OpaquePointer, modulus: [UInt8], exponent: [UInt8], modulusBits: Int) throws(JOSEError) {
        do {
            verifier = try RS256VerifyTemplate(key: key)
        } catch {
            EVP_PKEY_free(key)
            throw error
        }
        self.key = key
        self.modulus = modulus
        self.exponent = exponent
        self.modulusBits = modulusBits
    }

    deinit {
        EVP_PKEY_free(key)
    }

    /// True when `signature` is a valid RS256 (RSASSA-PKCS1-v1_5 + SHA-256) signature of `message`.
    @inlinable
    public func verifyRS256(signature: some Collection<UInt8>, message: some Collection<UInt8>) -> Bool {
        withContiguousBytes(signature) { signature in
            withContiguousBytes(message) { message in verifyRS256(signature: signature, message: message) }
        }
    }

    /// The same, without the generic dispatch.
    public func verifyRS256(signature: [UInt8], message: [UInt8]) -> Bool {
        var messageHash = SHA256Stream()
        return verifyRS256(signature: signature, message: message, hashingInto: &messageHash)
    }

    /// The form the token verification hot path uses: the message is hashed into `messageHash` (a fresh stream),
    /// which the caller may continue, e.g. to the whole token's digest, without hashing the message again.
    public func verifyRS256(signature: [UInt8], message: [UInt8], hashingInto messageHash: inout SHA256Stream) -> Bool {
        signature.withUnsafeBufferPointer { signature in
            message.withUnsafeBufferPointer { message in
                verifyRS256(signature: signature, message: message, hashingInto: &messageHash)
            }
        }
    }

    /// The borrowed-buffer form, for callers that already hold contiguous bytes.
    public func verifyRS256(signature: UnsafeBufferPointer<UInt8>, message: UnsafeBufferPointer<UInt8>) -> Bool {
        var messageHash = SHA256Stream()
        return verifyRS256(signature: signature, message: message, hashingInto: &messageHash)
    }

    private func verifyRS256(signature: UnsafeBufferPointer<UInt8>, message: UnsafeBufferPointer<UInt8>,
                             hashingInto messageHash: inout SHA256Stream) -> Bool {
        // A PKCS#1 signature is exactly as long as the modulus; anything else is forged or truncated.
        guard signature.count == (modulusBits + 7) / 8 else { return false }
        messageHash.update(message)
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: SHA256.digestLength) { digest in
            messageHash.finalize(into: digest.baseAddress!)
            return verifier.verify(signature: signature, digest: UnsafeBufferPointer(digest))
        }
    }

    /// The public JWK: kty, kid, use=sig, alg=RS256, n, e.
    public func jwk(keyID: String) -> JSONValue {
        [
            "kty": "RSA",
            "kid": .string(keyID),
            "use": "sig",
            "alg": .string(JWSAlgorithm.RS256.rawValue),
            "n": .string(Base64URL.encode(modulus)),
            "e": .string(Base64URL.encode(exponent)),
        ]
    }

    /// SubjectPublicKeyInfo PEM ("-----BEGIN PUBLIC KEY-----").
    public func pemString() throws(JOSEError) -> String {
        try PEM.writePublicKey(key)
    }
}
