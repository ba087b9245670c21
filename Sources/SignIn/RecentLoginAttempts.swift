import Foundation
import JOSE
import Locking
import Storage

/// The login attempts this process stored lately, by state digest, so that the callback finishing one (nearly always
/// seconds after its `GET /login`, on the same instance) checks it without a database read. Only what was committed
/// is remembered. A miss (another instance's attempt, or one pushed out by newer ones) is opened from its sealed
/// `state` (`SealedLoginState`), or read from the database.
///
/// A remembered attempt may have been spent meanwhile by another instance: the sign-in's transaction spends it
/// again and refuses it there, with the same error. An attempt spent here, or found spent there, is remembered as
/// spent until newer ones push it out.
package final class RecentLoginAttempts: Sendable {
    package struct Entry: Sendable, Equatable {
        package let attempt: LoginAttempt
        package let authorization: ProviderAuthorization?

        package init(attempt: LoginAttempt, authorization: ProviderAuthorization?) {
            self.attempt = attempt
            self.authorization = authorization
        }
    }

    /// About 2 MiB when full (3.3 MiB less peak RSS than as strings). Covers half a minute between page and callback
    /// at 270 sign-ins a second; beyond that the oldest are opened from their state, or read from the database.
    package static let defaultCapacity = 8_192

    /// One remembered attempt, its nonce and binding digest kept as their 32 bytes in place: as strings (heap
    /// objects, with an object around the attempt) a full ring held some 5 MiB, 640 bytes an attempt. The state
    /// digest stays a string, the one the table is keyed by, so that a look-up parses nothing.
    private struct Slot {
        var state: String
        var nonce: Compact32
        var bindingHash: Compact32
        var createdAt: Date
        var expiresAt: Date
        /// When it was spent here (set in place: no new slot per sign-in).
        var spentAt: Date?
        /// Only an OpenID provider's attempts have one: boxed, so that the others' slots do not hold its room.
        var authorization: AuthorizationBox?
    }

    private final class AuthorizationBox: Sendable {
        let authorization: ProviderAuthorization
        init(_ authorization: ProviderAuthorization) { self.authorization = authorization }
    }

    private struct Ring {
        /// Slot indices by state digest.
        var indices: [String: Int32] = [:]
        /// In the order remembered; the oldest is overwritten (and its index dropped) when the ring is full.
        var slots: [Slot] = []
        var next = 0
    }

    private let capacity: Int
    private let ring: Lock<Ring>

    package init(capacity: Int = RecentLoginAttempts.defaultCapacity) {
        self.capacity = max(1, capacity)
        var ring = Ring()
        ring.slots.reserveCapacity(self.capacity)
        ring.indices.reserveCapacity(self.capacity)
        self.ring = Lock(ring)
    }

    package func remember(_ attempt: LoginAttempt, authorization: ProviderAuthorization? = nil) {
        let slot = Slot(state: attempt.state, nonce: Compact32(attempt.nonce),
                        bindingHash: Compact32(attempt.bindingHash), createdAt: attempt.createdAt,
                        expiresAt: attempt.expiresAt, spentAt: attempt.consumedAt,
                        authorization: authorization.map(AuthorizationBox.init))
        ring.withLock { ring in
            if ring.slots.count < capacity {
                ring.slots.append(slot)
            } else {
                let oldest = ring.slots[ring.next].state
                if ring.indices[oldest] == Int32(ring.next) { ring.indices[oldest] = nil }
                ring.slots[ring.next] = slot
            }
            ring.indices[slot.state] = Int32(ring.next)
            ring.next = (ring.next + 1) % capacity
        }
    }

    package func entry(stateDigest: String) -> Entry? {
        guard let slot = ring.withLock({ ring in ring.indices[stateDigest].map { ring.slots[Int($0)] } }) else { return nil }
        let attempt = LoginAttempt(state: stateDigest, nonce: slot.nonce.text, bindingHash: slot.bindingHash.text,
                                   createdAt: slot.createdAt, expiresAt: slot.expiresAt, consumedAt: slot.spentAt)
        return Entry(attempt: attempt, authorization: slot.authorization?.authorization)
    }

    /// Remembers a remembered attempt as spent (`at`), so that a repeated callback is refused before its token is
    /// verified, as a database read would refuse it; one not remembered stays so.
    package func spend(stateDigest: String, at now: Date) {
        ring.withLock { ring in
            if let index = ring.indices[stateDigest] { ring.slots[Int(index)].spentAt = now }
        }
    }
}

/// A text that is nearly always 32 bytes in a canonical encoding (a SHA-256 digest in lowercase hex, a random
/// nonce in base64url), kept as those bytes in place; any other text (or a string without contiguous UTF-8) is
/// kept as it is. `text` gives the text back exactly.
package enum Compact32: Sendable {
    package struct Bytes: Sendable {
        package var words: (UInt64, UInt64, UInt64, UInt64)

        package init(_ bytes: some Collection<UInt8>) {
            var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
            withUnsafeMutableBytes(of: &words) { raw in raw.copyBytes(from: bytes) }
            self.words = words
        }

        package init(words: (UInt64, UInt64, UInt64, UInt64)) { self.words = words }
    }

    case lowercaseHex(Bytes)
    case base64URL(Bytes)
    case text(String)

    package init(_ text: String) {
        let utf8 = text.utf8
        if utf8.count == 64, let bytes = Self.lowercaseHex(utf8) {
            self = .lowercaseHex(bytes)
        } else if utf8.count == 43, let bytes = Base64URL.decode(bytes: utf8), bytes.count == 32 {
            // Decoding is strict (one encoding a byte string), so encoding the bytes gives this text back.
            self = .base64URL(Bytes(bytes))
        } else {
            self = .text(text)
        }
    }

    package var text: String {
        switch self {
        case let .lowercaseHex(bytes): withUnsafeBytes(of: bytes.words) { Hex.encode($0) }
        case let .base64URL(bytes): withUnsafeBytes(of: bytes.words) { Base64URL.encode($0) }
        case let .text(text): text
        }
    }

    /// The 32 bytes of 64 lowercase hex digits; nil for anything else (upper case included, which `Hex.encode`
    /// would not give back).
    private static func lowercaseHex(_ utf8: String.UTF8View) -> Bytes? {
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        let parsed = utf8.withContiguousStorageIfAvailable { digits in
            withUnsafeMutableBytes(of: &words) { bytes in
                var invalid: UInt8 = 0
                for index in 0..<32 {
                    let (high, low) = (hexValue(digits[2 &* index]), hexValue(digits[2 &* index &+ 1]))
                    invalid |= (high | low) & 0xF0
                    bytes[index] = high << 4 | (low & 0x0F)
                }
                return invalid == 0
            }
        }
        return parsed == true ? Bytes(words: words) : nil
    }

    /// A lowercase hex digit's value; 0xFF for anything else.
    private static func hexValue(_ digit: UInt8) -> UInt8 {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit &- UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit &- UInt8(ascii: "a") &+ 10
        default: 0xFF
        }
    }
}
