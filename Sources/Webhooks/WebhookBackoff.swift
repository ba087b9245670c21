import Foundation

/// When a failed delivery is tried again: doubling from `first` up to `cap`, each delay drawn between its half and
/// its whole (jitter), so that receivers coming back are not hit by every instance's events at once.
public struct WebhookBackoff: Sendable {
    public var first: TimeInterval = 2
    public var cap: TimeInterval = 3600

    public init(first: TimeInterval = 2, cap: TimeInterval = 3600) {
        self.first = first
        self.cap = cap
    }

    /// The wait after the `failures`-th failed attempt (1 for the first), `random` in 0...1.
    public func delay(afterFailures failures: Int, random: Double = Double.random(in: 0...1)) -> TimeInterval {
        let exponent = Double(min(max(failures - 1, 0), 30))
        let full = min(first * pow(2, exponent), cap)
        return full / 2 + full / 2 * min(max(random, 0), 1)
    }
}
