import JSON
internal import COpenSSL

/// AES-256-GCM authenticated encryption, for secrets kept at rest (e.g. Apple refresh tokens).
///
/// Sealed box layout: 12-byte random nonce ‖ ciphertext ‖ 16-byte tag.
public enum AESGCM {
    public static let keyLength = 32
    public static let nonceLength = 12
    public static let tagLength = 16

    public static func seal(
        _ plaintext: some Collection<UInt8>, key: [UInt8], associatedData: some Collection<UInt8> = [UInt8]()
    ) throws(JOSEError) -> [UInt8] {
        try requireKeyLength(key)
        let nonce = SecureRandom.bytes(nonceLength)
        return try withContiguousBytes(plaintext) { plaintext throws(JOSEError) in
            try withContiguousBytes(associatedData) { aad throws(JOSEError) in
                try seal(plaintext, key: key, nonce: nonce, aad: aad)
            }
        }
    }

    /// Decrypts a sealed box; throws `decryptionFailed` if any byte of it, the key or the
    /// associated data differs from what was sealed.
    public static func open(
        _ sealed: some Collection<UInt8>, key: [UInt8], associatedData: some Collection<UInt8> = [UInt8]()
    ) throws(JOSEError) -> [UInt8] {
        try requireKeyLength(key)
        return try withContiguousBytes(sealed) { sealed throws(JOSEError) in
            guard sealed.count >= nonceLength + tagLength else { throw .decryptionFailed }
            return try withContiguousBytes(associatedData) { aad throws(JOSEError) in
                try open(sealed, key: key, aad: aad)
            }
        }
    }

    /// As `seal`, under the caller's 12-byte IV, which must never have sealed anything else under `key` (12 random
    /// bytes the sealed box travels with, for instance), and returned without it: ciphertext ‖ tag.
    public static func seal(
        _ plaintext: some Collection<UInt8>, key: [UInt8], iv: some Collection<UInt8>,
        associatedData: some Collection<UInt8> = [UInt8]()
    ) throws(JOSEError) -> [UInt8] {
        try requireKeyLength(key)
        guard iv.count == nonceLength else { throw .invalidKey("AES-GCM needs a \(nonceLength)-byte IV, got \(iv.count) bytes") }
        let sealed = try withContiguousBytes(plaintext) { plaintext throws(JOSEError) in
            try withContiguousBytes(associatedData) { aad throws(JOSEError) in
                try seal(plaintext, key: key, nonce: Array(iv), aad: aad)
            }
        }
        return Array(sealed.dropFirst(nonceLength))
    }

    /// Opens what `seal(_:key:iv:associatedData:)` returned, given the same IV.
    public static func open(
        _ ciphertextAndTag: some Collection<UInt8>, key: [UInt8], iv: some Collection<UInt8>,
        associatedData: some Collection<UInt8> = [UInt8]()
    ) throws(JOSEError) -> [UInt8] {
        guard iv.count == nonceLength else { throw .decryptionFailed }
        return try open(Array(iv) + Array(ciphertextAndTag), key: key, associatedData: associatedData)
    }

    private static func requireKeyLength(_ key: [UInt8]) throws(JOSEError) {
        guard key.count == keyLength else { throw .invalidKey("AES-256-GCM needs a \(keyLength)-byte key, got \(key.count) bytes") }
    }

    private static func seal(
        _ plaintext: UnsafeBufferPointer<UInt8>, key: [UInt8], nonce: [UInt8], aad: UnsafeBufferPointer<UInt8>
    ) throws(JOSEError) -> [UInt8] {
        let context = try newContext()
        defer { EVP_CIPHER_CTX_free(context) }
        let total = nonceLength + plaintext.count + tagLength
        var failure: JOSEError?
        let sealed = [UInt8](unsafeUninitializedCapacity: total) { output, initialized in
            initialized = 0
            let outputBase = output.baseAddress!
            outputBase.initialize(from: nonce, count: nonceLength)
            var length: Int32 = 0
            let ciphertext = outputBase + nonceLength
            guard EVP_EncryptInit_ex2(context, FetchedAlgorithms.aes256GCM, key, nonce, nil) == 1,
                  aad.isEmpty || EVP_EncryptUpdate(context, nil, &length, aad.baseAddress, Int32(aad.count)) == 1,
                  plaintext.isEmpty || EVP_EncryptUpdate(context, ciphertext, &length, plaintext.baseAddress, Int32(plaintext.count)) == 1,
                  EVP_EncryptFinal_ex(context, ciphertext + plaintext.count, &length) == 1,
                  EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, Int32(tagLength), ciphertext + plaintext.count) == 1
            else {
                failure = OpenSSLErrorQueue.failure("AES-GCM encryption")
                return
            }
            initialized = total
        }
        if let failure { throw failure }
        return sealed
    }

    private static func open(_ sealed: UnsafeBufferPointer<UInt8>, key: [UInt8], aad: UnsafeBufferPointer<UInt8>) throws(JOSEError) -> [UInt8] {
        let context = try newContext()
        defer { EVP_CIPHER_CTX_free(context) }
        let nonce = UnsafeBufferPointer(rebasing: sealed[..<nonceLength])
        let ciphertext = UnsafeBufferPointer(rebasing: sealed[nonceLength..<(sealed.count - tagLength)])
        let tag = UnsafeMutableRawPointer(mutating: sealed.baseAddress! + sealed.count - tagLength)
        var authentic = false
        let plaintext = [UInt8](unsafeUninitializedCapacity: ciphertext.count) { output, initialized in
            var length: Int32 = 0
            authentic = EVP_DecryptInit_ex2(context, FetchedAlgorithms.aes256GCM, key, nonce.baseAddress, nil) == 1
                && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, Int32(tagLength), tag) == 1
                && (aad.isEmpty || EVP_DecryptUpdate(context, nil, &length, aad.baseAddress, Int32(aad.count)) == 1)
                && (ciphertext.isEmpty || EVP_DecryptUpdate(context, output.baseAddress, &length, ciphertext.baseAddress, Int32(ciphertext.count)) == 1)
                && EVP_DecryptFinal_ex(context, output.baseAddress.map { $0 + ciphertext.count } ?? emptyBytePointer, &length) == 1
            initialized = ciphertext.count
        }
        guard authentic else {
            OpenSSLErrorQueue.clear()
            throw .decryptionFailed
        }
        return plaintext
    }

    private static func newContext() throws(JOSEError) -> OpaquePointer {
        guard let context = EVP_CIPHER_CTX_new() else { throw OpenSSLErrorQueue.failure("allocating a cipher context") }
        return context
    }
}
