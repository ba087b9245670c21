import Foundation
import Testing
@testable import Storage

/// What instances sharing one database agree on — rate limits, leases, claimed revocations — asserted
/// through two stores on one database (like two instances), on every backend.
@Suite("Shared state across instances, on every backend") struct SharedStateTests {
    static let threads = 8

    /// Every thread calls `body` with one of two stores on the database; returns what each returned.
    private func race<T: Sendable>(_ fixture: StoreFixture, _ body: @escaping @Sendable (any Store, Int) throws -> T) throws -> [T] {
        let stores = [fixture.store, try fixture.openAnother()]
        onThreads(Self.threads) { thread in
            _ = try? stores[thread % 2].read { _ in Thread.sleep(forTimeInterval: 0.05) }
        }
        let outcomes = Collected<T>()
        let failures = Collected<String>()
        onThreads(Self.threads) { thread in
            do {
                outcomes.append(try body(stores[thread % 2], thread))
            } catch {
                failures.append("\(error)")
            }
        }
        #expect(failures.all.isEmpty, "\(failures.all)")
        return outcomes.all
    }

    @Test("a rate limit admits its burst and no more, however the requests are spread; then one per interval",
          arguments: Backend.allCases)
    func rateLimitAcrossStores(backend: Backend) throws {
        try withFreshStore(backend) { fixture in
            let admitted = try race(fixture) { store, _ in
                var count = 0
                for _ in 0..<3 where try store.write({ try $0.admitRateLimited(key: "203.0.113.7", now: t0, interval: 6, burst: 10) }) {
                    count += 1
                }
                return count
            }
            #expect(admitted.reduce(0, +) == 10)
            let store = fixture.store
            let stillRefused = try store.write { try $0.admitRateLimited(key: "203.0.113.7", now: t0 + 5, interval: 6, burst: 10) }
            let afterInterval = try store.write { try $0.admitRateLimited(key: "203.0.113.7", now: t0 + 6, interval: 6, burst: 10) }
            let twice = try store.write { try $0.admitRateLimited(key: "203.0.113.7", now: t0 + 6, interval: 6, burst: 10) }
            let otherClient = try store.write { try $0.admitRateLimited(key: "198.51.100.1", now: t0, interval: 6, burst: 10) }
            #expect(!stillRefused && afterInterval && !twice && otherClient)
            let removedEarly = try store.write { try $0.deleteIdleRateLimits(now: t0 + 7) }
            let removedIdle = try store.write { try $0.deleteIdleRateLimits(now: t0 + 3600) }
            #expect(removedEarly == 1)  // only the other client's bucket is full again
            #expect(removedIdle == 1)
        }
    }

    @Test("one lease has one holder at a time; it renews, and another takes it only once it expired",
          arguments: Backend.allCases)
    func leases(backend: Backend) throws {
        try withFreshStore(backend) { fixture in
            let winners = try race(fixture) { store, thread in
                try store.write { try $0.acquireLease(name: "sweeper", holder: "instance-\(thread)", now: t0, until: t0 + 45) }
                    ? thread : nil
            }.compactMap { $0 }
            #expect(winners.count == 1)
            let holder = "instance-\(winners.first ?? -1)"
            let other = holder == "instance-0" ? "instance-1" : "instance-0"
            let store = fixture.store
            let renewed = try store.write { try $0.acquireLease(name: "sweeper", holder: holder, now: t0 + 30, until: t0 + 75) }
            let taken = try store.write { try $0.acquireLease(name: "sweeper", holder: other, now: t0 + 60, until: t0 + 105) }
            let afterExpiry = try store.write { try $0.acquireLease(name: "sweeper", holder: other, now: t0 + 75, until: t0 + 120) }
            let formerHolder = try store.write { try $0.acquireLease(name: "sweeper", holder: holder, now: t0 + 80, until: t0 + 125) }
            #expect(renewed && !taken && afterExpiry && !formerHolder)
        }
    }

    @Test("racing claims hand every due revocation to exactly one claimant; claimed ones are not due until the claim ends",
          arguments: Backend.allCases)
    func revocationClaims(backend: Backend) throws {
        try withFreshStore(backend) { fixture in
            let store = fixture.store
            let queued = try store.write { tx in
                try (0..<40).map { _ in try tx.enqueueRevocation(clientID: "com.example.web", encryptedToken: [1, 2, 3],
                                                                 tokenTypeHint: "refresh_token", now: t0) }
            }
            let claims = try race(fixture) { store, _ in
                var ids: [Int64] = []
                while true {
                    let batch = try store.write { try $0.claimDueRevocations(now: t0 + 1, limit: 3, claimedUntil: t0 + 300) }
                    if batch.isEmpty { return ids }
                    ids += batch.map(\.id)
                }
            }
            let claimed = claims.flatMap { $0 }
            #expect(claimed.count == queued.count)
            #expect(Set(claimed) == Set(queued))
            let dueDuringClaim = try store.read { try $0.dueRevocations(now: t0 + 299, limit: 100) }
            let dueAfterClaim = try store.read { try $0.dueRevocations(now: t0 + 300, limit: 100) }
            #expect(dueDuringClaim.isEmpty)
            #expect(dueAfterClaim.count == queued.count)
        }
    }
}
