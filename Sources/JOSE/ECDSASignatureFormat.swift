internal import COpenSSL

/// ECDSA signatures come out of OpenSSL as DER `SEQUENCE { r, s }`; JWS uses raw r ‖ s,
/// each left-padded to the curve size (RFC 7518 §3.4).
enum ECDSASignatureFormat {
    static func raw(fromDER der: [UInt8], coordinateSize: Int) throws(JOSEError) -> [UInt8] {
        let signature: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let signature else { throw OpenSSLErrorQueue.failure("decoding an ECDSA signature") }
        defer { ECDSA_SIG_free(signature) }
        var r: OpaquePointer?, s: OpaquePointer?
        ECDSA_SIG_get0(signature, &r, &s)
        var fits = true
        let raw = [UInt8](unsafeUninitializedCapacity: 2 * coordinateSize) { buffer, initialized in
            let base = buffer.baseAddress!
            fits = BN_bn2binpad(r, base, Int32(coordinateSize)) == Int32(coordinateSize)
                && BN_bn2binpad(s, base + coordinateSize, Int32(coordinateSize)) == Int32(coordinateSize)
            initialized = fits ? 2 * coordinateSize : 0
        }
        guard fits else { throw .crypto("ECDSA signature component is larger than the curve") }
        return raw
    }

    /// DER for raw r ‖ s; nil if it is not exactly two coordinates long.
    static func der(fromRaw raw: UnsafeBufferPointer<UInt8>, coordinateSize: Int) -> [UInt8]? {
        guard raw.count == 2 * coordinateSize, let base = raw.baseAddress else { return nil }
        guard let signature = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(signature) }
        guard let r = BN_bin2bn(base, Int32(coordinateSize), nil) else { return nil }
        guard let s = BN_bin2bn(base + coordinateSize, Int32(coordinateSize), nil) else {
            BN_free(r)
            return nil
        }
        guard ECDSA_SIG_set0(signature, r, s) == 1 else {  // takes r and s on success only
            BN_free(r)
            BN_free(s)
            return nil
        }
        let length = i2d_ECDSA_SIG(signature, nil)
        guard length > 0 else { return nil }
        return [UInt8](unsafeUninitializedCapacity: Int(length)) { buffer, initialized in
            var cursor = buffer.baseAddress
            initialized = Int(i2d_ECDSA_SIG(signature, &cursor))
        }
    }
}
