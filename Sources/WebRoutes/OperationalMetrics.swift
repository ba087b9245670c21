import AppleID
import BridgeMetrics
import Foundation
import Locking
import SignIn
import Storage
import Webhooks

/// The queue of Apple revocations as last counted. Counted at start-up and after each pass over the queue (every
/// 30 s), not per scrape: a scrape must answer at once, even while the database does not.
package final class RevocationBacklog: Sendable {
    package struct Count: Sendable, Equatable {
        package var pending: Int
        package var oldestQueuedAt: Date?

        package init(pending: Int, oldestQueuedAt: Date? = nil) {
            self.pending = pending
            self.oldestQueuedAt = oldestQueuedAt
        }
    }

    /// What it reads and writes of the store.

    package typealias StoreRole = any AppleServerSideTransaction

    private let store: StoreAccess<StoreRole>
    private let last = Lock<Count?>(nil)

    package init(store: StoreAccess<StoreRole>) {
        self.store = store
    }

    /// Counts the queue again; a failed count keeps the last one.
    package func refresh() {
        guard let count = try? store.read({ Count(pending: try $0.pendingRevocationCount(),
                                                  oldestQueuedAt: try $0.oldestPendingRevocationCreatedAt()) }) else { return }
        last.withLock { $0 = count }
    }

    package var count: Count? { last.withLock { $0 } }
}

/// What `/metrics` adds to the recorded counters at scrape time: Apple's key fetches, the call guard's state,
/// the revocation backlog, where callbacks found their login attempts and the store's write retries. Reads only
/// memory.
package struct OperationalMetrics: Sendable {
    package let keys: JWKSCache
    package let callGuard: AppleCallGuard
    /// The breakers' names: the paths of `/auth/token`, `/auth/keys` and `/auth/revoke` under APPLE_ID_URL.
    package let appleEndpoints: [String]
    package let revocations: RevocationBacklog
    package let attemptLookups: AttemptLookups
    /// Read for its own counters only (write retries, lock timeouts, group commits), never for rows.
    package let store: any Store
    package let clock: WallClock
    /// The webhook outbox's worker, whose backlog it reports; nil without webhooks.
    package var webhooks: WebhookDelivery? = nil

    package init(keys: JWKSCache, callGuard: AppleCallGuard, appleIDURL: String, revocations: RevocationBacklog,
                 attemptLookups: AttemptLookups, store: any Store, clock: WallClock) {
        self.keys = keys
        self.callGuard = callGuard
        appleEndpoints = ["/auth/keys", "/auth/revoke", "/auth/token"].map { GuardedTransport.endpoint(appleIDURL + $0) }
        self.revocations = revocations
        self.attemptLookups = attemptLookups
        self.store = store
        self.clock = clock
    }

    package func samples() -> [Metrics.Sample] {
        var samples = [Metrics.Sample("bridge_jwks_fetches_total", Double(keys.fetches)),
                       Metrics.Sample("bridge_apple_calls_in_flight", Double(callGuard.inFlight))]
        samples += appleEndpoints.map {
            Metrics.Sample("bridge_apple_breaker_open", callGuard.isOpen($0) ? 1 : 0, labels: [("endpoint", $0)])
        }
        if let backlog = revocations.count {
            let age = backlog.oldestQueuedAt.map { max(0, clock.now.timeIntervalSince($0).rounded()) } ?? 0
            samples += [Metrics.Sample("bridge_revocations_pending", Double(backlog.pending)),
                        Metrics.Sample("bridge_revocation_oldest_pending_age_seconds", age)]
        }
        if let backlog = webhooks?.backlog {
            let age = backlog.oldestPendingCreatedAt.map { max(0, clock.now.timeIntervalSince($0).rounded()) } ?? 0
            samples += [Metrics.Sample("bridge_webhook_events_pending", Double(backlog.pending)),
                        Metrics.Sample("bridge_webhook_events_failed", Double(backlog.failed)),
                        Metrics.Sample("bridge_webhook_oldest_pending_age_seconds", age)]
        }
        // Kept apart from the recorded counters: those would cost every callback a dictionary update.
        samples += AttemptLookups.Source.allCases.map {
            Metrics.Sample("bridge_login_attempt_lookups_total", Double(attemptLookups.count($0)), labels: [("source", $0.rawValue)])
        }
        // PostgreSQL's writes run again after losing a race (none on SQLite): per sign-in, what instances cost each other.
        samples += store.writeRetries.map {
            Metrics.Sample("bridge_store_write_retries_total", Double($0.count), labels: [("cause", $0.cause)])
        }
        // How many writes one COMMIT carried (writes ÷ commits), and how often a failed write made its batch run again.
        let grouped = store.groupCommitCounts
        samples += [Metrics.Sample("bridge_store_group_commits_total", Double(grouped.commits)),
                    Metrics.Sample("bridge_store_group_committed_writes_total", Double(grouped.writes)),
                    Metrics.Sample("bridge_store_group_commit_replays_total", Double(grouped.replays)),
                    Metrics.Sample("bridge_store_group_coalesced_commits_total", Double(grouped.coalescedCommits))]
        // Store calls that gave up waiting for a row another transaction held (PostgreSQL's lock_timeout).
        if store.backendName == "postgres" {
            samples.append(Metrics.Sample("bridge_store_lock_timeouts_total", Double(store.lockTimeouts)))
        }
        return samples
    }
}
