import Foundation

/// A shared rate limit's arguments in the whole milliseconds both stores keep.
struct RateLimitArguments {
    let key: String
    let nowMilliseconds: Int64
    let intervalMilliseconds: Int64
    /// How far ahead of now the bucket may be filled: `burst` intervals.
    let windowMilliseconds: Int64

    init(key: String, now: Date, interval: TimeInterval, burst: Int) throws {
        guard !key.isEmpty, key.utf8.count <= 200 else {
            throw StoreError.invalidArgument("a rate limit key is 1 to 200 bytes")
        }
        guard interval > 0, interval <= 86_400, burst >= 1, burst <= 1_000_000 else {
            throw StoreError.invalidArgument("a rate limit needs an interval of up to a day and a burst of at least 1")
        }
        self.key = key
        nowMilliseconds = Self.milliseconds(now)
        intervalMilliseconds = max(1, Int64((interval * 1000).rounded()))
        windowMilliseconds = intervalMilliseconds * Int64(burst)
    }

    static func milliseconds(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1000).rounded(.down)
        return Int64(max(-9.0e15, min(9.0e15, value)))
    }
}
