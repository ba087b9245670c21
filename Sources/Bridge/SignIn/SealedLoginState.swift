import Foundation
import JOSE
import Storage

/// The `state` of a web login attempt, carrying what its callback checks: the attempt's nonce, the digest of its
/// binding cookie, and its times, sealed with AES-256-GCM under a key derived from BRIDGE_SECRET_KEY. Any instance
/// sharing that key checks a callback's attempt from its `state` alone, without reading the database, whichever
/// instance served the login page and however long ago. The attempt is still stored, and spent by the sign-in's
/// own write: that is what makes it single use, and what refuses an attempt spent meanwhile.
///
/// The sealed box's random 96-bit IV and the 256-bit random nonce inside it make every state unpredictable; a state
/// that does not open (another key, altered, or not sealed at all, like an OpenID client's authorization's) is
/// looked up in the database as before.
struct SealedLoginState: Sendable {
    private let key: [UInt8]
    /// Binds the box to its use: a box sealed for anything else under the same key does not open as a state.
    private static let associatedData = Array("login-state-v1".utf8)
    private static let version: UInt8 = 1
    /// version, created at and expires at (whole unix seconds, big-endian), the binding digest's 32 bytes; the
    /// nonce's UTF-8 follows.
    private static let fixedLength = 1 + 8 + 8 + 32

    init(key: [UInt8]) {
        self.key = key
    }

    /// A state sealing `attempt`'s nonce, binding digest and times. The attempt's `state` (a digest) is not inside:
    /// it is the digest of what this returns.
    func seal(nonce: String, bindingHash: String, createdAt: Date, expiresAt: Date) throws -> String {
        guard bindingHash.utf8.count == 64, let binding = Self.bytes(hex: bindingHash) else {
            throw StoreError.invalidArgument("a binding digest is 64 lowercase hex digits")
        }
        var plain: [UInt8] = []
        plain.reserveCapacity(Self.fixedLength + nonce.utf8.count)
        plain.append(Self.version)
        Self.append(Int64(createdAt.timeIntervalSince1970.rounded(.down)), to: &plain)
        Self.append(Int64(expiresAt.timeIntervalSince1970.rounded(.down)), to: &plain)
        plain += binding
        plain += nonce.utf8
        return Base64URL.encode(try AESGCM.seal(plain, key: key, associatedData: Self.associatedData))
    }

    /// The live-or-not attempt `state` names, as stored (`stateDigest` is its digest; never spent, as far as the
    /// state tells), or nil when `state` was not sealed with this key for this use.
    func open(_ state: String, stateDigest: String) -> LoginAttempt? {
        guard state.utf8.count <= 512, let sealed = Base64URL.decode(state),
              let plain = try? AESGCM.open(sealed, key: key, associatedData: Self.associatedData),
              plain.count > Self.fixedLength, plain[0] == Self.version,
              let nonce = String(validating: plain[Self.fixedLength...], as: UTF8.self) else { return nil }
        let createdAt = Self.int64(plain, at: 1), expiresAt = Self.int64(plain, at: 9)
        return LoginAttempt(state: stateDigest, nonce: nonce, bindingHash: Hex.encode(plain[17..<Self.fixedLength]),
                            createdAt: Date(timeIntervalSince1970: TimeInterval(createdAt)),
                            expiresAt: Date(timeIntervalSince1970: TimeInterval(expiresAt)), consumedAt: nil)
    }

    private static func append(_ value: Int64, to bytes: inout [UInt8]) {
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> Int64(shift))) }
    }

    private static func int64(_ bytes: [UInt8], at offset: Int) -> Int64 {
        bytes[offset..<offset + 8].reduce(0) { $0 << 8 | Int64($1) }
    }

    private static func bytes(hex: String) -> [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(hex.utf8.count / 2)
        var high: UInt8?
        for character in hex.utf8 {
            let value: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = character - UInt8(ascii: "a") + 10
            default: return nil
            }
            if let first = high { bytes.append(first << 4 | value); high = nil } else { high = value }
        }
        return high == nil ? bytes : nil
    }
}
