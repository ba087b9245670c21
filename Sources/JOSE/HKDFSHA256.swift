import JSON
internal import COpenSSL

/// HKDF with SHA-256 (RFC 5869), extract-then-expand.
public enum HKDFSHA256 {
    public static func derive(
        key: some Collection<UInt8>, salt: some Collection<UInt8> = [UInt8](), info: some Collection<UInt8> = [UInt8](), length: Int
    ) throws(JOSEError) -> [UInt8] {
        guard length > 0, length <= 255 * SHA256.digestLength else {
            throw .crypto("HKDF-SHA256 output length must be 1...\(255 * SHA256.digestLength) bytes")
        }
        return try withContiguousBytes(key) { key throws(JOSEError) in
            guard !key.isEmpty else { throw .invalidKey("HKDF input key is empty") }
            return try withContiguousBytes(salt) { salt throws(JOSEError) in
                try withContiguousBytes(info) { info throws(JOSEError) in
                    try derive(key: key, salt: salt, info: info, length: length)
                }
            }
        }
    }

    private static func derive(
        key: UnsafeBufferPointer<UInt8>, salt: UnsafeBufferPointer<UInt8>, info: UnsafeBufferPointer<UInt8>, length: Int
    ) throws(JOSEError) -> [UInt8] {
        guard let context = EVP_KDF_CTX_new(FetchedAlgorithms.hkdf) else { throw OpenSSLErrorQueue.failure("allocating an HKDF context") }
        defer { EVP_KDF_CTX_free(context) }
        // An absent salt means HashLen zero bytes (RFC 5869 §2.2), which OpenSSL applies
        // itself; an empty info is simply left out.
        var parameters = [
            OSSL_PARAM_construct_utf8_string(OpenSSLNames.digest, OpenSSLNames.sha256, 0),
            OSSL_PARAM_construct_octet_string(OpenSSLNames.key, UnsafeMutableRawPointer(mutating: key.baseAddress), key.count),
        ]
        if !salt.isEmpty {
            parameters.append(OSSL_PARAM_construct_octet_string(OpenSSLNames.salt, UnsafeMutableRawPointer(mutating: salt.baseAddress), salt.count))
        }
        if !info.isEmpty {
            parameters.append(OSSL_PARAM_construct_octet_string(OpenSSLNames.info, UnsafeMutableRawPointer(mutating: info.baseAddress), info.count))
        }
        parameters.append(OSSL_PARAM_construct_end())
        var failed = false
        let output = [UInt8](unsafeUninitializedCapacity: length) { output, initialized in
            failed = EVP_KDF_derive(context, output.baseAddress, length, parameters) != 1
            initialized = failed ? 0 : length
        }
        if failed { throw OpenSSLErrorQueue.failure("HKDF-SHA256 derivation") }
        return output
    }
}
