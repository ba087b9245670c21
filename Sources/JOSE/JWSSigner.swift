import JSON
/// Produces compact JWS strings (`header.payload.signature`).
public enum JWSSigner {
    /// Signs `claims` with RS256. The header gets `alg: RS256`, and `kid` when given.
    public static func signRS256(
        header: [String: JSONValue] = [:], claims: JSONValue, key: RSAPrivateKey, keyID: String? = nil
    ) throws(JOSEError) -> String {
        try compact(header: header, algorithm: .RS256, keyID: keyID, payload: claims.serializedBytes()) { input throws(JOSEError) in
            try key.signRS256(input)
        }
    }

    /// Signs `claims` with ES256. The header gets `alg: ES256`, and `kid` when given.
    public static func signES256(
        header: [String: JSONValue] = [:], claims: JSONValue, key: ECPrivateKey, keyID: String? = nil
    ) throws(JOSEError) -> String {
        try compact(header: header, algorithm: .ES256, keyID: keyID, payload: claims.serializedBytes()) { input throws(JOSEError) in
            try key.signES256(input)
        }
    }

    /// Assembles a compact JWS around arbitrary payload bytes with the given signing function.
    public static func compact(
        header: [String: JSONValue], algorithm: JWSAlgorithm, keyID: String?, payload: [UInt8],
        sign: ([UInt8]) throws(JOSEError) -> [UInt8]
    ) throws(JOSEError) -> String {
        var header = header
        header["alg"] = .string(algorithm.rawValue)
        if let keyID { header["kid"] = .string(keyID) }
        let signingInput = Base64URL.encode(JSONValue.object(header).serializedBytes()) + "." + Base64URL.encode(payload)
        let signature = try sign(Array(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature)
    }
}
