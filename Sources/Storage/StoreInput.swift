import Foundation

/// Checks every backend makes before it writes, so that each store refuses the same
/// values with the same error.
package enum StoreInput {
    package static func validate(_ profile: AppleUserProfile) throws {
        guard !profile.sub.isEmpty else {
            throw StoreError.invalidArgument("an Apple user needs a non-empty sub")
        }
        // SQLite and libpq take text up to its first NUL: "a\0b" would be stored, and found, as the user "a".
        if holdsNUL(profile.sub) || holdsNUL(profile.email) || holdsNUL(profile.displayName) || holdsNUL(profile.transferSub) {
            throw StoreError.invalidArgument("an Apple user's sub, email and name cannot contain a NUL character")
        }
    }

    /// By `memchr` over the string's bytes: `utf8.contains(0)` walked the view a byte at a time, about 600
    /// instructions for each sign-in's profile, which every sign-in checks twice.
    private static func holdsNUL(_ text: String?) -> Bool {
        guard var text else { return false }
        return text.withUTF8 { bytes in bytes.baseAddress.map { memchr($0, 0, bytes.count) != nil } ?? false }
    }

    package static func validateTransfer(_ identifiers: String...) throws {
        for identifier in identifiers where identifier.isEmpty || identifier.utf8.contains(0) {
            throw StoreError.invalidArgument("a transfer identifier, sub or team cannot be empty or contain a NUL character")
        }
    }

    /// Group names travel in a header (`X-Auth-Request-Groups`, comma-separated) and a query: 1 to 64 of
    /// `A-Z a-z 0-9 . _ : @ -`, starting with a letter or digit.
    package static func validateGroupName(_ name: String) throws {
        guard isGroupName(name) else {
            throw StoreError.invalidArgument("a group name is 1 to 64 of A-Z a-z 0-9 . _ : @ -, starting with a letter or digit")
        }
    }

    package static func isGroupName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        func isAlphanumeric(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        }
        guard let first = bytes.first, bytes.count <= 64, isAlphanumeric(first) else { return false }
        return bytes.allSatisfy { isAlphanumeric($0) || Array(".-_:@".utf8).contains($0) }
    }

    package static func validate(_ record: AppleTokenRecord) throws {
        guard !record.encryptedRefreshToken.isEmpty else {
            throw StoreError.invalidArgument("an Apple token record needs the encrypted token")
        }
    }

    package static func validateRevocation(encryptedToken: [UInt8]) throws {
        guard !encryptedToken.isEmpty else {
            throw StoreError.invalidArgument("a revocation needs the encrypted token")
        }
    }
}

/// Times as every backend stores them: whole unix seconds in a 64-bit integer.
package enum StoredTime {
    /// Whole seconds since 1970, rounded down. A date beyond what 64 bits hold (a token
    /// claiming to expire in 1e19 seconds) is clamped to the latest or earliest storable
    /// second: it still compares as far future or far past, and it never traps.
    /// Not-a-number is refused.
    package static func unixSeconds(_ date: Date) throws -> Int64 {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        guard !seconds.isNaN else {
            throw StoreError.invalidArgument("a time that is not a number")
        }
        // 2^63: Double(Int64.max) rounds up to it, one past the largest Int64.
        let limit = 9_223_372_036_854_775_808.0
        if seconds >= limit { return .max }
        if seconds < -limit { return .min }
        return Int64(seconds)
    }

    package static func date(fromUnixSeconds seconds: Int64) -> Date {
        Date(timeIntervalSince1970: TimeInterval(seconds))
    }
}

/// How long a store keeps records that have no expiry of their own.
package enum StoreRetention {
    /// Notification ids: far beyond the `exp` of any notification token, so a replay
    /// after they are dropped fails verification instead.
    package static let notificationIDs: TimeInterval = 30 * 24 * 60 * 60
}
