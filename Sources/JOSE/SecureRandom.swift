internal import COpenSSL

/// Bytes from OpenSSL's CSPRNG.
public enum SecureRandom {
    /// `count` random bytes. Stops the process if the CSPRNG fails: continuing with weak
    /// randomness (predictable state, nonces, keys) would be worse than stopping.
    public static func bytes(_ count: Int) -> [UInt8] {
        precondition(count >= 0 && count <= Int(Int32.max), "invalid random byte count")
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            if count > 0, RAND_bytes(buffer.baseAddress, Int32(count)) != 1 {
                fatalError("OpenSSL CSPRNG failed: \(OpenSSLErrorQueue.drain())")
            }
            initialized = count
        }
    }

    /// `byteCount` random bytes as base64url: for state values, nonces and opaque tokens.
    public static func base64URLToken(byteCount: Int = 32) -> String {
        Base64URL.encode(bytes(byteCount))
    }
}
