internal import COpenSSL

/// An EVP_PKEY_CTX set up once for RS256 verification (PKCS#1 v1.5 padding, SHA-256
/// DigestInfo), which each verify duplicates.
///
/// Setting up a context costs provider lookups; duplicating a ready one costs about 0.1 µs.
/// A context must not be used by two threads at once, but `EVP_PKEY_CTX_dup` takes a
/// const context, and OpenSSL guarantees concurrent calls that only read an object are
/// safe (openssl-threads(7)). So the template is shared and never used directly.
final class RS256VerifyTemplate: @unchecked Sendable {
    private let template: OpaquePointer

    /// `key` is borrowed; the context takes its own reference.
    init(key: OpaquePointer) throws(JOSEError) {
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else {
            throw OpenSSLErrorQueue.failure("allocating an RSA verify context")
        }
        guard EVP_PKEY_verify_init(context) == 1,
              EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PADDING) == 1,
              EVP_PKEY_CTX_set_signature_md(context, FetchedAlgorithms.sha256) == 1
        else {
            EVP_PKEY_CTX_free(context)
            throw OpenSSLErrorQueue.failure("preparing an RS256 verify context")
        }
        template = context
    }

    deinit {
        EVP_PKEY_CTX_free(template)
    }

    /// Verifies a PKCS#1 v1.5 signature over a SHA-256 digest.
    func verify(signature: UnsafeBufferPointer<UInt8>, digest: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let context = EVP_PKEY_CTX_dup(template) else {
            OpenSSLErrorQueue.clear()
            return false
        }
        defer { EVP_PKEY_CTX_free(context) }
        let valid = EVP_PKEY_verify(context, signature.nonNullBase, signature.count, digest.nonNullBase, digest.count) == 1
        if !valid { OpenSSLErrorQueue.clear() }
        return valid
    }
}
