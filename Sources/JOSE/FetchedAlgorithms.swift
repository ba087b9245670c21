internal import COpenSSL

/// Algorithm implementations fetched from OpenSSL's default provider once per process.
///
/// OpenSSL 3 resolves legacy handles such as `EVP_sha256()` by name, under a lock, on
/// every use; an explicitly fetched handle skips that. Fetched objects are immutable and
/// safe to share between threads, hence `nonisolated(unsafe)`.
enum FetchedAlgorithms {
    nonisolated(unsafe) static let sha256: OpaquePointer = required(EVP_MD_fetch(nil, "SHA256", nil), "SHA256")
    nonisolated(unsafe) static let aes256GCM: OpaquePointer = required(EVP_CIPHER_fetch(nil, "AES-256-GCM", nil), "AES-256-GCM")
    nonisolated(unsafe) static let hmac: OpaquePointer = required(EVP_MAC_fetch(nil, "HMAC", nil), "HMAC")
    nonisolated(unsafe) static let hkdf: OpaquePointer = required(EVP_KDF_fetch(nil, "HKDF", nil), "HKDF")

    /// A missing default-provider algorithm means a broken OpenSSL install, not bad input.
    private static func required(_ handle: OpaquePointer?, _ name: String) -> OpaquePointer {
        guard let handle else { fatalError("OpenSSL has no \(name) implementation: \(OpenSSLErrorQueue.drain())") }
        return handle
    }
}
