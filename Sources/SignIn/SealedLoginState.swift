import Foundation
import JOSE
import Storage

/// The `state` of a web login attempt, carrying what its callback checks: the attempt's nonce, the digest of its
/// binding cookie, and its times. Any instance sharing BRIDGE_SECRET_KEY checks a callback's attempt from its `state`
/// alone, without reading the database, whichever instance served the login page and however long ago. The attempt
/// is still stored, and spent by the sign-in's own write: that is what makes it single use, and what refuses an
/// attempt spent meanwhile.
///
/// Layout: the nonce's 32 random bytes (the nonce is public: it goes to Apple beside the state), then AES-256-GCM
/// under a key derived from BRIDGE_SECRET_KEY, its IV the nonce's first 12 bytes and the whole nonce authenticated
/// with it, over the times (whole unix seconds, 32 bits each), the binding digest and the attempt's kind (one byte:
/// whether an OpenID client's authorization waits beside it): 89 bytes, 119 characters, the most for which the
/// state's own SHA-256 (its key in the database) is still two blocks. A state that does not open (another key,
/// altered, or from before this layout) is looked up in the database as before.
package struct SealedLoginState: Sendable {
    private let key: [UInt8]
    /// Binds the box to its use: a box sealed for anything else under the same key does not open as a state.
    private static let purpose = Array("login-state-v2".utf8)
    private static let nonceLength = 32
    /// created at, expires at, the binding digest's 32 bytes, the kind.
    private static let sealedLength = 4 + 4 + 32 + 1
    private static let stateLength = nonceLength + sealedLength + AESGCM.tagLength

    package init(key: [UInt8]) {
        self.key = key
    }

    /// A state for an attempt with this nonce (base64url of 32 bytes, as `SecretTokens.random()` makes it), binding
    /// digest and times. The attempt's `state` (a digest) is not inside: it is the digest of what this returns.
    /// A nonce is sealed once, for the one attempt it was made for: it is the IV, and AES-GCM must never seal two
    /// things under one IV.
    package func seal(nonce: String, bindingHash: String, createdAt: Date, expiresAt: Date, kind: LoginAttemptKind = .web) throws -> String {
        guard let nonceBytes = Base64URL.decode(nonce), nonceBytes.count == Self.nonceLength,
              Base64URL.encode(nonceBytes) == nonce else {
            throw StoreError.invalidArgument("a login nonce is 32 bytes in base64url")
        }
        guard let binding = Hex.decode(bindingHash), binding.count == 32, Hex.encode(binding) == bindingHash else {
            throw StoreError.invalidArgument("a binding digest is 64 lowercase hex digits")
        }
        var plain: [UInt8] = []
        plain.reserveCapacity(Self.sealedLength)
        Self.append(createdAt, to: &plain)
        Self.append(expiresAt, to: &plain)
        plain += binding
        plain.append(kind.rawValue)
        let sealed = try AESGCM.seal(plain, key: key, iv: nonceBytes[..<AESGCM.nonceLength],
                                     associatedData: Self.purpose + nonceBytes)
        return Base64URL.encode(nonceBytes + sealed)
    }

    /// The attempt `state` names, as stored (`stateDigest` is its digest; never spent, as far as the state tells),
    /// and its kind; nil when `state` was not sealed with this key for this use.
    package func open(_ state: String, stateDigest: String) -> (attempt: LoginAttempt, kind: LoginAttemptKind)? {
        guard state.utf8.count <= 160, let bytes = Base64URL.decode(state), bytes.count == Self.stateLength else { return nil }
        let nonceBytes = bytes[..<Self.nonceLength]
        guard let plain = try? AESGCM.open(bytes[Self.nonceLength...], key: key, iv: nonceBytes.prefix(AESGCM.nonceLength),
                                           associatedData: Self.purpose + nonceBytes),
              plain.count == Self.sealedLength, let kind = LoginAttemptKind(rawValue: plain[plain.count - 1]) else { return nil }
        let attempt = LoginAttempt(state: stateDigest, nonce: Base64URL.encode(nonceBytes), bindingHash: Hex.encode(plain[8..<40]),
                                   createdAt: Self.date(plain, at: 0), expiresAt: Self.date(plain, at: 4), consumedAt: nil)
        return (attempt, kind)
    }

    private static func append(_ date: Date, to bytes: inout [UInt8]) {
        let seconds = UInt32(clamping: Int64(date.timeIntervalSince1970.rounded(.down)))
        for shift in [24, 16, 8, 0] { bytes.append(UInt8(truncatingIfNeeded: seconds >> UInt32(shift))) }
    }

    private static func date(_ bytes: [UInt8], at offset: Int) -> Date {
        Date(timeIntervalSince1970: TimeInterval(bytes[offset..<offset + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }))
    }
}

/// What a login attempt finishes: a sign-in at the bridge, or an OpenID client's authorization (stored beside the
/// attempt, by the digest of its state).
package enum LoginAttemptKind: UInt8, Sendable {
    case web = 0
    case provider = 1
}
