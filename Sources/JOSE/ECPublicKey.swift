import JSON
internal import COpenSSL

/// A P-256 public key that verifies ES256 signatures. Safe to share between threads.
public final class ECPublicKey: @unchecked Sendable {
    /// Owned, public part only.
    private let key: OpaquePointer

    /// From a "PUBLIC KEY" (SubjectPublicKeyInfo) PEM holding a P-256 key.
    public convenience init(pem: String) throws(JOSEError) {
        let key = try PEM.readPublicKey(pem)
        try P256.requireP256(key, role: "PEM public key")
        self.init(adopting: key)
    }

    /// From the affine coordinates, 32 big-endian bytes each.
    public convenience init(x: [UInt8], y: [UInt8]) throws(JOSEError) {
        guard x.count == P256.coordinateSize, y.count == P256.coordinateSize else {
            throw .invalidKey("P-256 coordinates must be \(P256.coordinateSize) bytes each")
        }
        self.init(adopting: try EVPKeyBuilder.p256PublicKey(point: [0x04] + x + y))
    }

    /// From a JWK object: `kty` EC, `crv` P-256, `x`, `y`; `use`/`alg`, if present, `sig`/`ES256`.
    public convenience init(jwk: JSONValue) throws(JOSEError) {
        guard case .object = jwk else { throw .invalidKey("JWK is not a JSON object") }
        guard jwk["kty"]?.stringValue == "EC" else { throw .invalidKey("JWK kty is not \"EC\"") }
        guard jwk["crv"]?.stringValue == "P-256" else { throw .invalidKey("JWK crv is not \"P-256\"") }
        if let use = jwk["use"], use.stringValue != "sig" { throw .invalidKey("JWK use is not \"sig\"") }
        if let alg = jwk["alg"], alg.stringValue != JWSAlgorithm.ES256.rawValue { throw .invalidKey("JWK alg is not \"ES256\"") }
        guard let x = jwk["x"]?.stringValue.flatMap({ Base64URL.decode($0) }),
              let y = jwk["y"]?.stringValue.flatMap({ Base64URL.decode($0) })
        else {
            throw .invalidKey("JWK x or y is missing or not base64url")
        }
        try self.init(x: x, y: y)
    }

    init(adopting key: OpaquePointer) {
        self.key = key
    }

    deinit {
        EVP_PKEY_free(key)
    }

    /// True when `rs` is a valid ES256 signature of `message` in JWS form: r ‖ s, 64 bytes.
    public func verifyES256(signature rs: some Collection<UInt8>, message: some Collection<UInt8>) -> Bool {
        withContiguousBytes(rs) { rs in
            guard let der = ECDSASignatureFormat.der(fromRaw: rs, coordinateSize: P256.coordinateSize) else {
                OpenSSLErrorQueue.clear()
                return false
            }
            return withContiguousBytes(message) { message in
                der.withUnsafeBufferPointer { der in EVPDigestSignature.verify(der, of: message, with: key) }
            }
        }
    }

    /// The x and y coordinates, 32 bytes each.
    public func coordinates() throws(JOSEError) -> (x: [UInt8], y: [UInt8]) {
        let point = try P256.publicPoint(of: key)
        return (Array(point[1...P256.coordinateSize]), Array(point[(1 + P256.coordinateSize)...]))
    }

    /// The public JWK: kty EC, crv P-256, kid, use=sig, alg=ES256, x, y.
    public func jwk(keyID: String) throws(JOSEError) -> JSONValue {
        let (x, y) = try coordinates()
        return [
            "kty": "EC",
            "crv": "P-256",
            "kid": .string(keyID),
            "use": "sig",
            "alg": .string(JWSAlgorithm.ES256.rawValue),
            "x": .string(Base64URL.encode(x)),
            "y": .string(Base64URL.encode(y)),
        ]
    }

    /// SubjectPublicKeyInfo PEM ("-----BEGIN PUBLIC KEY-----").
    public func pemString() throws(JOSEError) -> String {
        try PEM.writePublicKey(key)
    }
}
