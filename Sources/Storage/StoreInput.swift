import Foundation

/// Checks every backend makes before it writes, so that each store refuses the same
/// values with the same error.
package enum StoreInput {
    package static func validate(_ profile: AppleUserProfile) throws {
        guard !profile.sub.isEmpty else {
            throw StoreError.invalidArgument("an Apple user needs a non-empty sub")
        }
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
    /// Whole seconds since 1970, rounded down.
    package static func unixSeconds(_ date: Date) throws -> Int64 {
        Int64(date.timeIntervalSince1970.rounded(.down))
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
