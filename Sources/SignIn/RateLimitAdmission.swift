import Foundation
import Storage

/// One request's admission to the sign-in rate limit (`SignInRateLimit` in the web routes makes it from the
/// client's address), run inside a write transaction of the caller's: one upsert.
package struct RateLimitAdmission: Sendable {
    /// The admission is one upsert whose `WHERE` refuses: at READ COMMITTED a concurrent request of the same
    /// client waits for the bucket's row and then sees its new value, where SERIALIZABLE made every request of
    /// a busy client but one run again.
    package static let isolation = WriteIsolation.readCommitted

    package let key: String
    package let now: Date
    package let interval: TimeInterval
    package let burst: Int

    package init(key: String, now: Date, interval: TimeInterval, burst: Int) {
        self.key = key
        self.now = now
        self.interval = interval
        self.burst = burst
    }

    /// Throws `RateLimited` beyond the limit; a refused request changes nothing.
    package func admit(in transaction: any RateLimitTransaction) throws {
        let admitted = try transaction.admitRateLimited(key: key, now: now, interval: interval, burst: burst)
        // A refused request may try again within one interval (see `admitRateLimited`).
        guard admitted else { throw RateLimited(retryAfter: max(1, Int(interval.rounded(.up)))) }
    }
}
