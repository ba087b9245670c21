import Locking

/// Where callbacks found their login attempts, for `/metrics` (`bridge_login_attempt_lookups_total{source}`).
package final class AttemptLookups: Sendable {
    package enum Source: String, CaseIterable, Sendable {
        /// Remembered by this instance since its `GET /login`.
        case memory
        /// Opened from the callback's sealed `state`.
        case state
        /// Read from the database: an OpenID client's authorization, a state sealed under another key, or none.
        case database
    }

    private let counts = Lock<[Int]>(Array(repeating: 0, count: Source.allCases.count))

    package init() {}

    package func record(_ source: Source) {
        let index = Source.allCases.firstIndex(of: source)!
        counts.withLock { $0[index] += 1 }
    }

    package func count(_ source: Source) -> Int {
        let index = Source.allCases.firstIndex(of: source)!
        return counts.withLock { $0[index] }
    }
}
