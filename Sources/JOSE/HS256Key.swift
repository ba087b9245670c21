import JSON

/// A shared secret for HS256 JWS (RFC 7518 §3.2): for tokens a service issues to itself and checks itself,
/// never for anything a third party signs (those are verified with public keys only).
public struct HS256Key: Sendable {
    /// RFC 7518 §3.2: a key at least as long as the hash output.
    public static let minimumLength = 32
    private let secret: [UInt8]

    public init(secret: [UInt8]) throws(JOSEError) {
        guard secret.count >= Self.minimumLength else {
            throw .invalidKey("an HS256 key needs at least \(Self.minimumLength) bytes, got \(secret.count)")
        }
        self.secret = secret
    }

    /// A compact JWS over `claims`; the header gets `alg: HS256` and the caller's other members (e.g. `typ`).
    public func sign(claims: JSONValue, header: [String: JSONValue] = [:]) -> String {
        var header = header
        header["alg"] = .string(JWSAlgorithm.HS256.rawValue)
        let signingInput = Base64URL.encode(JSONValue.object(header).serializedBytes()) + "."
            + Base64URL.encode(claims.serializedBytes())
        return signingInput + "." + Base64URL.encode(HMACSHA256.authenticate(key: secret, message: Array(signingInput.utf8)))
    }

    /// The claims of a token this key signed. The token is parsed strictly (`CompactJWS`), its `alg` must be
    /// HS256 by name before any HMAC is computed, its `typ` must be `type` when one is given, and the tag is
    /// compared in constant time. Nothing here checks the claims themselves.
    public func verify(_ token: some StringProtocol, type: String? = nil,
                       maxLength: Int = CompactJWS.defaultMaxLength) throws(JOSEError) -> [String: JSONValue] {
        let jws = try CompactJWS(parsing: token, maxLength: maxLength)
        try jws.requireAlgorithm(in: [.HS256])
        if let type, jws.header["typ"]?.stringValue != type {
            throw .malformedToken("header \"typ\" is not \"\(type)\"")
        }
        guard HMACSHA256.isValid(tag: jws.signature, key: secret, message: jws.signingInput) else { throw .badSignature }
        return try jws.claims()
    }
}
