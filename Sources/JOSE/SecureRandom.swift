internal import COpenSSL
import Locking

/// Bytes from OpenSSL's CSPRNG.
public enum SecureRandom {
    /// `count` random bytes. Stops the process if the CSPRNG fails: continuing with weak
    /// randomness (predictable state, nonces, keys) would be worse than stopping.
    public static func bytes(_ count: Int) -> [UInt8] {
        precondition(count >= 0 && count <= Int(Int32.max), "invalid random byte count")
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            if count > 0 {
                if count <= Reserve.largestServed {
                    reserve.take(into: buffer)
                } else {
                    fill(buffer)
                }
            }
            initialized = count
        }
    }

    /// `byteCount` random bytes as base64url: for state values, nonces and opaque tokens.
    public static func base64URLToken(byteCount: Int = 32) -> String {
        Base64URL.encode(bytes(byteCount))
    }

    private static func fill(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
        if RAND_bytes(buffer.baseAddress, Int32(buffer.count)) != 1 {
            fatalError("OpenSSL CSPRNG failed: \(OpenSSLErrorQueue.drain())")
        }
    }

    /// Small requests (a session id, a state, a nonce: 16 to 32 bytes, several per sign-in) are served from 4 KiB
    /// drawn at once: each `RAND_bytes` call costs its DRBG's locking and bookkeeping whatever its size, about
    /// 3,400 instructions for 32 bytes. Served bytes are zeroed in the reserve, so it never hands out a byte twice
    /// or keeps one it gave. What stays in memory is what OpenSSL's own generator state would reveal anyway.
    private static let reserve = Reserve()

    private final class Reserve: Sendable {
        static let size = 4096
        static let largestServed = 64
        private let position = Lock(size)
        nonisolated(unsafe) private let bytes = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: size)

        /// Only under `position`'s lock is `bytes` read or written.
        func take(into destination: UnsafeMutableBufferPointer<UInt8>) {
            let count = destination.count
            position.withLock { position in
                if Self.size - position < count {
                    SecureRandom.fill(bytes)
                    position = 0
                }
                let served = UnsafeMutableBufferPointer(rebasing: bytes[position..<position + count])
                _ = destination.initialize(fromContentsOf: served)
                served.update(repeating: 0)
                position += count
            }
        }

        deinit { bytes.deallocate() }
    }
}
