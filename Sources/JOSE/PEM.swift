internal import COpenSSL

/// PEM text ⇄ EVP_PKEY through memory BIOs. Returned keys are owned by the caller.
enum PEM {
    /// A private key from PEM: PKCS#8 ("PRIVATE KEY", as in Apple's .p8 files) or the
    /// traditional RSA/EC forms. Encrypted keys are refused rather than prompting for a
    /// passphrase on the terminal, which is OpenSSL's default.
    static func readPrivateKey(_ pem: String) throws(JOSEError) -> OpaquePointer {
        try withReadBIO(pem) { bio in PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in -1 }, nil) }
    }

    /// A public key from a "PUBLIC KEY" (SubjectPublicKeyInfo) PEM.
    static func readPublicKey(_ pem: String) throws(JOSEError) -> OpaquePointer {
        try withReadBIO(pem) { bio in PEM_read_bio_PUBKEY(bio, nil, { _, _, _, _ in -1 }, nil) }
    }

    /// Unencrypted PKCS#8 ("-----BEGIN PRIVATE KEY-----").
    static func writePrivateKey(_ key: OpaquePointer) throws(JOSEError) -> String {
        try withWriteBIO { bio in PEM_write_bio_PKCS8PrivateKey(bio, key, nil, nil, 0, nil, nil) == 1 }
    }

    /// SubjectPublicKeyInfo ("-----BEGIN PUBLIC KEY-----").
    static func writePublicKey(_ key: OpaquePointer) throws(JOSEError) -> String {
        try withWriteBIO { bio in PEM_write_bio_PUBKEY(bio, key) == 1 }
    }

    private static func withReadBIO(_ pem: String, _ read: (OpaquePointer) -> OpaquePointer?) throws(JOSEError) -> OpaquePointer {
        var text = Array(pem.utf8)
        guard text.count < Int(Int32.max) else { throw .invalidKey("PEM text is too large") }
        let key: OpaquePointer? = text.withUnsafeMutableBytes { bytes in
            guard let bio = BIO_new_mem_buf(bytes.baseAddress, Int32(bytes.count)) else { return nil }
            defer { BIO_free(bio) }
            return read(bio)
        }
        // Scrub our copy: this may be a private key.
        text.withUnsafeMutableBytes { bytes in
            if let base = bytes.baseAddress { OPENSSL_cleanse(base, bytes.count) }
        }
        guard let key else {
            throw .unreadablePEM(OpenSSLErrorQueue.drain())
        }
        // Format probing may queue errors even when a decoder finally succeeds.
        OpenSSLErrorQueue.clear()
        return key
    }

    private static func withWriteBIO(_ write: (OpaquePointer) -> Bool) throws(JOSEError) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { throw OpenSSLErrorQueue.failure("allocating a memory BIO") }
        defer { BIO_free(bio) }
        guard write(bio) else { throw OpenSSLErrorQueue.failure("writing PEM") }
        let count = Int(BIO_ctrl_pending(bio))
        var bytes = [UInt8](repeating: 0, count: count)
        let read = BIO_read(bio, &bytes, Int32(count))
        guard read == Int32(count) else { throw OpenSSLErrorQueue.failure("reading PEM from memory") }
        return String(decoding: bytes, as: UTF8.self)
    }
}
