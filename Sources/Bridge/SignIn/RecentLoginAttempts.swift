import Foundation
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
final class RecentLoginAttempts: Sendable {
    /// A class, so that the table holds a pointer per attempt rather than two structs of strings inline.
    final class Entry: Sendable, Equatable {
        let attempt: LoginAttempt
        let authorization: ProviderAuthorization?

        init(attempt: LoginAttempt, authorization: ProviderAuthorization?) {
            self.attempt = attempt
            self.authorization = authorization
        }

        static func == (lhs: Entry, rhs: Entry) -> Bool {
            lhs.attempt == rhs.attempt && lhs.authorization == rhs.authorization
        }
    }

    /// About 5 MiB when full (some 640 bytes an attempt, measured as peak RSS). Covers half a minute between page
    /// and callback at 270 sign-ins a second; beyond that the oldest are read from the database again.
    static let defaultCapacity = 8_192

    /// A remembered attempt, and when it was spent here (set in place: no new entry per sign-in).
    private struct Slot {
        let entry: Entry
        var spentAt: Date?
    }

    private struct Ring {
        var entries: [String: Slot] = [:]
        /// Keys in the order remembered; the oldest is overwritten (and its entry dropped) when the ring is full.
        var order: [String?]
        var next = 0
    }

    private let ring: Lock<Ring>

    init(capacity: Int = RecentLoginAttempts.defaultCapacity) {
        ring = Lock(Ring(order: Array(repeating: nil, count: max(1, capacity))))
    }

    func remember(_ attempt: LoginAttempt, authorization: ProviderAuthorization? = nil) {
        ring.withLock { ring in
            if let oldest = ring.order[ring.next] { ring.entries[oldest] = nil }
            ring.order[ring.next] = attempt.state
            ring.next = (ring.next + 1) % ring.order.count
            ring.entries[attempt.state] = Slot(entry: Entry(attempt: attempt, authorization: authorization))
        }
    }

    func entry(stateDigest: String) -> Entry? {
        guard let slot = ring.withLock({ $0.entries[stateDigest] }) else { return nil }
        guard let spentAt = slot.spentAt else { return slot.entry }
        var spent = slot.entry.attempt
        spent.consumedAt = spentAt
        return Entry(attempt: spent, authorization: slot.entry.authorization)
    }

    /// Remembers a remembered attempt as spent (`at`), so that a repeated callback is refused before its token is
    /// verified, as a database read would refuse it; one not remembered stays so.
    func spend(stateDigest: String, at now: Date) {
        ring.withLock { $0.entries[stateDigest]?.spentAt = now }
    }
}
