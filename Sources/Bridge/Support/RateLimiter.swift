import Foundation
import Synchronization

/// A token bucket per client address: `burst` requests at once, refilled at `perMinute`.
/// In memory and per instance; it blunts credential stuffing and nonce flooding, it is not a quota system.
final class RateLimiter: Sendable {
    struct Bucket {
        var tokens: Double
        var updated: Date
    }

    let perMinute: Double
    let burst: Double
    private let buckets = Mutex<[String: Bucket]>([:])

    init(perMinute: Int, burst: Int) {
        self.perMinute = Double(perMinute)
        self.burst = Double(burst)
    }

    /// True when the request may go ahead; otherwise the seconds until it may.
    func admit(_ client: String, now: Date) -> (allowed: Bool, retryAfter: Int) {
        buckets.withLock { buckets in
            if buckets.count > 100_000 { buckets.removeAll() }  // bounded memory under address churn
            var bucket = buckets[client] ?? Bucket(tokens: burst, updated: now)
            let refill = now.timeIntervalSince(bucket.updated) * perMinute / 60
            bucket.tokens = min(burst, bucket.tokens + max(0, refill))
            bucket.updated = now
            defer { buckets[client] = bucket }
            guard bucket.tokens >= 1 else {
                return (false, Int(((1 - bucket.tokens) * 60 / perMinute).rounded(.up)))
            }
            bucket.tokens -= 1
            return (true, 0)
        }
    }
}
