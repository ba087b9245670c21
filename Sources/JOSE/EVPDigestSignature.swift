internal import COpenSSL

/// One-shot EVP_DigestSign / EVP_DigestVerify with SHA-256, on a fresh context per call
/// (so any number of threads may sign or verify with the same key).
enum EVPDigestSignature {
    /// The signature in OpenSSL's native form (PKCS#1 for RSA, DER for ECDSA).
    static func sign(_ message: UnsafeBufferPointer<UInt8>, with key: OpaquePointer) throws(JOSEError) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw OpenSSLErrorQueue.failure("allocating a digest context") }
        defer { EVP_MD_CTX_free(context) }
        var length = 0
        guard EVP_DigestSignInit(context, nil, FetchedAlgorithms.sha256, nil, key) == 1,
              EVP_DigestSign(context, nil, &length, message.nonNullBase, message.count) == 1
        else {
            throw OpenSSLErrorQueue.failure("preparing to sign")
        }
        var failed = false
        let signature = [UInt8](unsafeUninitializedCapacity: length) { buffer, initialized in
            initialized = length
            failed = EVP_DigestSign(context, buffer.baseAddress, &initialized, message.nonNullBase, message.count) != 1
            if failed { initialized = 0 }
        }
        if failed { throw OpenSSLErrorQueue.failure("signing") }
        return signature
    }

    static func verify(_ signature: UnsafeBufferPointer<UInt8>, of message: UnsafeBufferPointer<UInt8>, with key: OpaquePointer) -> Bool {
        guard let context = EVP_MD_CTX_new() else {
            OpenSSLErrorQueue.clear()
            return false
        }
        defer { EVP_MD_CTX_free(context) }
        let valid = EVP_DigestVerifyInit(context, nil, FetchedAlgorithms.sha256, nil, key) == 1
            && EVP_DigestVerify(context, signature.nonNullBase, signature.count, message.nonNullBase, message.count) == 1
        if !valid { OpenSSLErrorQueue.clear() }
        return valid
    }
}
