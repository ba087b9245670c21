internal import COpenSSL

/// Facts about NIST P-256 (prime256v1, secp256r1), the only curve ES256 uses.
enum P256 {
    static let coordinateSize = 32
    /// 0x04 ‖ x ‖ y.
    static let uncompressedPointSize = 1 + 2 * coordinateSize

    /// Refuses (and frees) any key that is not an EC key on P-256.
    static func requireP256(_ key: OpaquePointer, role: String) throws(JOSEError) {
        guard EVP_PKEY_is_a(key, "EC") == 1 else {
            EVP_PKEY_free(key)
            throw .invalidKey("\(role) is not an EC key; ES256 needs a P-256 key")
        }
        let group = EVPKeyParameters.groupName(key) ?? "unknown"
        guard group == "prime256v1" || group == "P-256" || group == "secp256r1" else {
            EVP_PKEY_free(key)
            throw .invalidKey("\(role) is on curve \(group); ES256 needs P-256 (prime256v1)")
        }
    }

    /// The uncompressed public point of an EC key.
    static func publicPoint(of key: OpaquePointer) throws(JOSEError) -> [UInt8] {
        let point = try EVPKeyParameters.octets(key, OSSL_PKEY_PARAM_PUB_KEY)
        guard point.count == uncompressedPointSize, point.first == 0x04 else {
            throw .invalidKey("EC public point is not an uncompressed P-256 point")
        }
        return point
    }
}
