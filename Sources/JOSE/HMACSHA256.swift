import JSON
internal import COpenSSL

public enum HMACSHA256 {
    public static let tagLength = 32

    @inlinable
    public static func authenticate(key: some Collection<UInt8>, message: some Collection<UInt8>) -> [UInt8] {
        withContiguousBytes(key) { key in
            withContiguousBytes(message) { message in authenticate(keyBuffer: key, messageBuffer: message) }
        }
    }

    /// Checks `tag` against the HMAC of `message`, in constant time.
    public static func isValid(tag: [UInt8], key: some Collection<UInt8>, message: some Collection<UInt8>) -> Bool {
        ConstantTime.equals(authenticate(key: key, message: message), tag)
    }

    @usableFromInline
    static func authenticate(keyBuffer key: UnsafeBufferPointer<UInt8>, messageBuffer message: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        guard let context = EVP_MAC_CTX_new(FetchedAlgorithms.hmac) else {
            fatalError("HMAC context allocation failed: \(OpenSSLErrorQueue.drain())")
        }
        defer { EVP_MAC_CTX_free(context) }
        let parameters = [
            OSSL_PARAM_construct_utf8_string(OpenSSLNames.digest, OpenSSLNames.sha256, 0),
            OSSL_PARAM_construct_end(),
        ]
        return [UInt8](unsafeUninitializedCapacity: tagLength) { output, initialized in
            var length = 0
            guard EVP_MAC_init(context, key.nonNullBase, key.count, parameters) == 1,
                  EVP_MAC_update(context, message.nonNullBase, message.count) == 1,
                  EVP_MAC_final(context, output.baseAddress, &length, tagLength) == 1,
                  length == tagLength
            else {
                fatalError("HMAC-SHA256 failed: \(OpenSSLErrorQueue.drain())")
            }
            initialized = tagLength
        }
    }
}
