import JSON
internal import COpenSSL

/// Builds public-key EVP_PKEYs from raw parameters (OSSL_PARAM_BLD + EVP_PKEY_fromdata).
/// Each function returns an owned EVP_PKEY the caller must free.
enum EVPKeyBuilder {
    private static let publicKeySelection = Int32(OSSL_KEYMGMT_SELECT_PUBLIC_KEY | OSSL_KEYMGMT_SELECT_ALL_PARAMETERS)

    /// An RSA public key from big-endian modulus and exponent.
    static func rsaPublicKey(modulus: [UInt8], exponent: [UInt8]) throws(JOSEError) -> OpaquePointer {
        guard let n = BN_bin2bn(modulus, Int32(modulus.count), nil) else { throw OpenSSLErrorQueue.failure("reading the RSA modulus") }
        defer { BN_free(n) }
        guard let e = BN_bin2bn(exponent, Int32(exponent.count), nil) else { throw OpenSSLErrorQueue.failure("reading the RSA exponent") }
        defer { BN_free(e) }
        return try build(type: OpenSSLNames.rsa, named: "RSA") { builder in
            OSSL_PARAM_BLD_push_BN(builder, OpenSSLNames.rsaModulus, n) == 1
                && OSSL_PARAM_BLD_push_BN(builder, OpenSSLNames.rsaExponent, e) == 1
        }
    }

    /// A P-256 public key from an uncompressed point (0x04 ‖ x ‖ y). OpenSSL checks that
    /// the point lies on the curve.
    static func p256PublicKey(point: [UInt8]) throws(JOSEError) -> OpaquePointer {
        try withContiguousBytes(point) { point throws(JOSEError) in
            try build(type: OpenSSLNames.ec, named: "EC") { builder in
                OSSL_PARAM_BLD_push_utf8_string(builder, OpenSSLNames.groupName, OpenSSLNames.prime256v1, 0) == 1
                    && OSSL_PARAM_BLD_push_octet_string(builder, OpenSSLNames.publicKey, point.baseAddress, point.count) == 1
            }
        }
    }

    /// `pushParameters` must push only pointers that stay valid until this function returns.
    private static func build(
        type: UnsafeMutablePointer<CChar>, named name: String, _ pushParameters: (OpaquePointer) -> Bool
    ) throws(JOSEError) -> OpaquePointer {
        guard let builder = OSSL_PARAM_BLD_new() else { throw OpenSSLErrorQueue.failure("allocating a parameter builder") }
        defer { OSSL_PARAM_BLD_free(builder) }
        guard pushParameters(builder), let parameters = OSSL_PARAM_BLD_to_param(builder) else {
            throw OpenSSLErrorQueue.failure("building \(name) key parameters")
        }
        defer { OSSL_PARAM_free(parameters) }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, type, nil) else {
            throw OpenSSLErrorQueue.failure("allocating an \(name) key context")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_fromdata_init(context) == 1,
              EVP_PKEY_fromdata(context, &key, publicKeySelection, parameters) == 1,
              let key
        else {
            let reason = OpenSSLErrorQueue.drain()
            throw .invalidKey("OpenSSL refused the \(name) public key parameters" + (reason.isEmpty ? "" : " (\(reason))"))
        }
        return key
    }
}

/// Reads parameters back out of an EVP_PKEY.
enum EVPKeyParameters {
    /// A big-number parameter (e.g. RSA "n", "e") as minimal big-endian bytes.
    static func bigNumber(_ key: OpaquePointer, _ name: String) throws(JOSEError) -> [UInt8] {
        var number: OpaquePointer?
        guard EVP_PKEY_get_bn_param(key, name, &number) == 1, let number else {
            throw OpenSSLErrorQueue.failure("reading key parameter \(name)")
        }
        defer { BN_free(number) }
        let count = Int((BN_num_bits(number) + 7) / 8)
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            initialized = Int(BN_bn2bin(number, buffer.baseAddress))
        }
    }

    /// An octet-string parameter (e.g. an EC key's encoded public point).
    static func octets(_ key: OpaquePointer, _ name: String) throws(JOSEError) -> [UInt8] {
        var length = 0
        guard EVP_PKEY_get_octet_string_param(key, name, nil, 0, &length) == 1 else {
            throw OpenSSLErrorQueue.failure("reading key parameter \(name)")
        }
        var failed = false
        let value = [UInt8](unsafeUninitializedCapacity: length) { buffer, initialized in
            failed = EVP_PKEY_get_octet_string_param(key, name, buffer.baseAddress, length, &initialized) != 1
            if failed { initialized = 0 }
        }
        if failed { throw OpenSSLErrorQueue.failure("reading key parameter \(name)") }
        return value
    }

    /// The EC curve name as OpenSSL spells it (e.g. "prime256v1", "secp384r1"), or nil if none.
    static func groupName(_ key: OpaquePointer) -> String? {
        var buffer = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_group_name(key, &buffer, buffer.count, &length) == 1 else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
