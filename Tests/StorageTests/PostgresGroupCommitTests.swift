import Foundation
import Testing
@testable import Storage

extension PostgresStoreTests {
    /// READ COMMITTED writes that wait together share one transaction (`PostgresGroupCommit`).
    @Suite("Group commit") struct GroupCommit {
        /// Each queued write's index and outcome.
        typealias Outcomes = Collected<(Int, Result<String, any Error>)>

        /// One lane, so that what waits while it is busy is one batch.
        static func migratedStore(_ url: PostgresURL) throws -> PostgresStore {
            let store = try PostgresStore(url: url, poolSize: 4, batchLimits: .init(lanes: 1, maxWrites: 64))
            _ = try store.migrate()
            return store
        }

        /// An attempt already used, which a later spend of it refuses.
        static func storeSpentAttempt(_ state: String, in store: PostgresStore) throws {
            try store.write { tx in
                try tx.insertLoginAttempt(loginAttempt(state))
                _ = try tx.consumeLoginAttempt(state: state, now: t0)
            }
        }

        /// Holds the one lane inside a write until `queueOthers` has queued `others` writes (each entering `answered`
        /// and leaving it from its completion); returns once all of them were answered. They then form one batch.
        static func heldBatch(_ store: PostgresStore, others: Int, queueOthers: (DispatchGroup) -> Void) {
            let running = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), answered = DispatchGroup()
            answered.enter()
            store.write(isolation: .readCommitted, { tx in
                try tx.insertLoginAttempt(loginAttempt("holder-\(UUID().uuidString)"))
                running.signal()
                release.wait()
            }, completion: { _ in answered.leave() })
            running.wait()  // taken alone: nothing else was queued yet
            queueOthers(answered)
            while store.waitingWriteCount < others { usleep(1_000) }
            release.signal()
            answered.wait()
        }

        /// Queues `body` (index, run number) as a READ COMMITTED write; its outcome goes to `outcomes`.
        static func queue(_ store: PostgresStore, _ index: Int, _ answered: DispatchGroup,
                          _ outcomes: Outcomes, runs: Collected<Int>,
                          _ body: @escaping @Sendable (any StoreTransaction) throws -> String) {
            answered.enter()
            store.write(isolation: .readCommitted, { tx in
                runs.append(index)
                return try body(tx)
            }, completion: { outcomes.append((index, $0)); answered.leave() })
        }

        static func described(_ outcomes: Outcomes) -> [String] {
            outcomes.all.sorted { $0.0 < $1.0 }.map { index, outcome in
                switch outcome {
                case let .success(value): "\(index) \(value)"
                case let .failure(error): "\(index) \(error is Abort ? "abort" : "error: \(error)")"
                }
            }
        }

        @Test("writes waiting together commit in one transaction, in order, each seeing those before it")
        func oneTransaction() throws {
            try withFreshPostgresDatabase { url in
                let store = try Self.migratedStore(url)
                let before = store.groupCommitCounts
                let outcomes = Outcomes(), runs = Collected<Int>()
                Self.heldBatch(store, others: 8) { answered in
                    for index in 0..<8 {
                        Self.queue(store, index, answered, outcomes, runs: runs) { tx in
                            try tx.insertLoginAttempt(loginAttempt("w\(index)"))
                            // The write before this one, not committed yet, is seen.
                            return index == 0 ? "first" : (try tx.loginAttempt(state: "w\(index - 1)") != nil ? "saw" : "blind")
                        }
                    }
                }
                #expect(Self.described(outcomes) == ["0 first"] + (1..<8).map { "\($0) saw" })
                let after = store.groupCommitCounts
                #expect(after.commits - before.commits == 2)  // the holder alone, then the eight together
                #expect(after.writes - before.writes == 9)
                #expect(after.replays == before.replays)
                #expect(runs.all == Array(0..<8))
                #expect(try postgresScalar("SELECT COUNT(*) AS value FROM login_attempts WHERE state LIKE 'w%'", in: url) == 8)
            }
        }

        @Test("a write refused before any statement of its own changed a row leaves its batch as it was; one that threw after writing makes every write of the batch run again alone",
              arguments: [false, true])
        func refusedWrite(afterWriting: Bool) throws {
            try withFreshPostgresDatabase { url in
                let store = try Self.migratedStore(url)
                let before = store.groupCommitCounts
                let outcomes = Outcomes(), runs = Collected<Int>()
                Self.heldBatch(store, others: 4) { answered in
                    for index in 0..<4 {
                        Self.queue(store, index, answered, outcomes, runs: runs) { tx in
                            if index == 2 {
                                if afterWriting { try tx.insertLoginAttempt(loginAttempt("refused")) }
                                _ = try tx.consumeLoginAttempt(state: "nobody", now: t0)  // changes nothing
                                throw Abort()
                            }
                            try tx.insertLoginAttempt(loginAttempt("other-\(index)"))
                            return "ok"
                        }
                    }
                }
                #expect(Self.described(outcomes) == ["0 ok", "1 ok", "2 abort", "3 ok"])
                let after = store.groupCommitCounts
                #expect(after.replays - before.replays == (afterWriting ? 1 : 0))
                #expect(after.writes - before.writes == 4)
                // After the batch was rolled back every one of its writes runs alone: the fourth had not run in it yet.
                #expect(runs.all.sorted() == (afterWriting ? [0, 0, 1, 1, 2, 2, 3] : [0, 1, 2, 3]))
                #expect(try postgresScalar("SELECT COUNT(*) AS value FROM login_attempts WHERE state = 'refused'", in: url) == 0)
                #expect(try postgresScalar("SELECT COUNT(*) AS value FROM login_attempts WHERE state LIKE 'other-%'", in: url) == 3)
            }
        }

        @Test("a write whose last statement, sent without waiting, is refused in the next write's round trip gets the refusal, and the next write commits")
        func deferredRefusalIsTheirs() throws {
            try withFreshPostgresDatabase { url in
                let store = try Self.migratedStore(url)
                try Self.storeSpentAttempt("spent", in: store)
                let outcomes = Outcomes(), runs = Collected<Int>()
                Self.heldBatch(store, others: 2) { answered in
                    Self.queue(store, 0, answered, outcomes, runs: runs) { tx in
                        try tx.insertLoginAttempt(loginAttempt("first"))
                        // Sent with the next statement of the transaction: the second write's.
                        try tx.consumeLoginAttempt(state: "spent", now: t0, otherwise: Abort())
                        return "ok"
                    }
                    Self.queue(store, 1, answered, outcomes, runs: runs) { tx in
                        _ = try tx.consumeLoginAttempt(state: "nobody", now: t0)
                        return "ok"
                    }
                }
                #expect(Self.described(outcomes) == ["0 abort", "1 ok"])
                #expect(try postgresScalar("SELECT COUNT(*) AS value FROM login_attempts WHERE state = 'first'", in: url) == 0)
            }
        }

        @Test("a write refused by a statement sent without waiting, whose later statements in the same round trip wrote, leaves none of it")
        func refusedInItsOwnRoundTrip() throws {
            try withFreshPostgresDatabase { url in
                let store = try Self.migratedStore(url)
                try Self.storeSpentAttempt("spent", in: store)
                let outcomes = Outcomes(), runs = Collected<Int>()
                Self.heldBatch(store, others: 3) { answered in
                    for index in 0..<3 {
                        Self.queue(store, index, answered, outcomes, runs: runs) { tx in
                            if index == 1 {
                                // Refused only once the insert after it has run, in the same round trip.
                                try tx.consumeLoginAttempt(state: "spent", now: t0, otherwise: Abort())
                                try tx.insertLoginAttempt(loginAttempt("after-refusal"))
                                return "ok"
                            }
                            try tx.insertLoginAttempt(loginAttempt("other-\(index)"))
                            return "ok"
                        }
                    }
                }
                #expect(Self.described(outcomes) == ["0 ok", "1 abort", "2 ok"])
                #expect(try postgresScalar("SELECT COUNT(*) AS value FROM login_attempts WHERE state = 'after-refusal'", in: url) == 0)
                #expect(try postgresScalar("SELECT COUNT(*) AS value FROM login_attempts WHERE state LIKE 'other-%'", in: url) == 2)
            }
        }

        @Test("with no connection to be had, every queued write is answered when the first gives up, not one pool wait after another")
        func noConnectionFailsTheQueue() throws {
            try withFreshPostgresDatabase { url in
                let store = try PostgresStore(url: url, poolSize: 1, batchLimits: .init(lanes: 1, maxWrites: 64))
                _ = try store.migrate()
                // A SERIALIZABLE write (not the lanes') holds the pool's one connection.
                let holding = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), held = DispatchGroup()
                held.enter()
                store.write(isolation: .serializable, { tx in
                    _ = try tx.loginAttempt(state: "nobody")
                    holding.signal()
                    release.wait()
                }, completion: { _ in held.leave() })
                holding.wait()
                let outcomes = Outcomes(), runs = Collected<Int>(), answered = DispatchGroup()
                let started = Date()
                for index in 0..<4 {
                    Self.queue(store, index, answered, outcomes, runs: runs) { tx in
                        try tx.insertLoginAttempt(loginAttempt("w\(index)"))
                        return "ok"
                    }
                    // The first is taken alone, and waits for a connection; the others queue behind it.
                    while index == 0, store.waitingWriteCount > 0 { usleep(1_000) }
                }
                answered.wait()
                let waited = Date().timeIntervalSince(started)
                release.signal()
                held.wait()
                // One pool wait (5 s) for all four, where the queue used to wait its own after the first's (10 s).
                #expect(waited < 8, "\(waited) s")
                #expect(outcomes.all.count == 4)
                #expect(outcomes.all.allSatisfy { if case .failure(StoreError.unavailable) = $0.1 { true } else { false } })
                #expect(runs.all.isEmpty)
            }
        }

        @Test("a batch kept waiting for a row another transaction holds runs its writes alone, which wait for it as usual")
        func lockWaitRunsAlone() throws {
            try withFreshPostgresDatabase { url in
                let store = try Self.migratedStore(url)
                try store.write { try $0.insertLoginAttempt(loginAttempt("locked")) }
                let before = store.groupCommitCounts
                let outcomes = Outcomes(), runs = Collected<Int>()
                let held = DispatchSemaphore(value: 0), released = Collected<String>()
                Thread {
                    do {
                        let holder = try PostgresConnection(conninfo: url.connectionString, defaults: [:])
                        try holder.execute("BEGIN; UPDATE login_attempts SET nonce = 'held' WHERE state = 'locked'")
                        held.signal()
                        // Once the batch gave up waiting (its lock wait is 100 ms), the writes run alone get the row.
                        let deadline = Date() + 10
                        while store.groupCommitCounts.replays == before.replays, Date() < deadline { usleep(5_000) }
                        usleep(200_000)
                        released.append("released")
                        try holder.execute("ROLLBACK")
                    } catch {
                        released.append("\(error)")
                        held.signal()
                    }
                }.start()
                held.wait()
                Self.heldBatch(store, others: 3) { answered in
                    for index in 0..<3 {
                        Self.queue(store, index, answered, outcomes, runs: runs) { tx in
                            if index == 1 { return try tx.consumeLoginAttempt(state: "locked", now: t0) ? "spent" : "refused" }
                            try tx.insertLoginAttempt(loginAttempt("other-\(index)"))
                            return "ok"
                        }
                    }
                }
                #expect(Self.described(outcomes) == ["0 ok", "1 spent", "2 ok"])
                #expect(released.all == ["released"])
                #expect(store.groupCommitCounts.replays - before.replays == 1)
                #expect(store.lockTimeouts == 0)
            }
        }
    }
}
