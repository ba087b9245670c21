import Foundation
import Testing
@testable import Storage

extension StoreBehaviour.Transactions {
    @Test("32 concurrent writers, every other one throwing: the others commit, the throwers leave nothing")
    func concurrentWritersSomeThrow() throws {
        try withTemporaryStore { store, _ throws in
            let outcomes = Collected<String>()
            onThreads(32) { thread in
                do {
                    try store.write { tx in
                        try tx.insertLoginAttempt(loginAttempt("w\(thread)"))
                        if thread.isMultiple(of: 2) { throw Abort() }
                    }
                    outcomes.append("ok")
                } catch is Abort {
                    outcomes.append("abort")
                } catch {
                    outcomes.append("error: \(error)")
                }
            }
            #expect(outcomes.all.filter { $0 == "ok" }.count == 16)
            #expect(outcomes.all.filter { $0 == "abort" }.count == 16)
            let written = try store.read { tx in try (0..<32).filter { try tx.loginAttempt(state: "w\($0)") != nil } }
            #expect(written == (0..<32).filter { !$0.isMultiple(of: 2) })
        }
    }
}

extension SQLiteStoreSpecifics {
    @Suite("Group commit") struct GroupCommit {
        static let oneBigBatch = SQLiteGroupCommit.Limits(maxWrites: 1_000, maxDuration: .seconds(30))

        static func migratedStore(_ database: TestDatabase, limits: SQLiteGroupCommit.Limits) throws -> SQLiteStore {
            let store = try SQLiteStore(path: database.sqlitePath, readerCount: 1,
                                        batchLimits: limits, checkpointTiming: .init())
            _ = try store.migrate()
            return store
        }

        /// Runs `first` holding the writer until `others` more writes wait, then `others`
        /// writes on their own threads: all of them land in one batch. (When a write of the batch throws, `first`
        /// runs again at once: it holds the writer only the first time.)
        static func oneBatch(_ store: SQLiteStore, others: Int, first: @escaping @Sendable (any StoreTransaction) throws -> Void,
                             other: @escaping @Sendable (Int, any StoreTransaction) throws -> Void) -> [String] {
            let outcomes = Collected<String>()
            let holding = DispatchSemaphore(value: 0)
            let done = DispatchGroup()
            @Sendable func record(_ name: String, _ write: () throws -> Void) {
                do { try write(); outcomes.append("\(name) ok") } catch is Abort { outcomes.append("\(name) abort") } catch {
                    outcomes.append("\(name) error: \(error)")
                }
            }
            let runs = Collected<Int>()
            done.enter()
            Thread {
                record("first") {
                    try store.write { tx in
                        runs.append(1)
                        if runs.all.count == 1 {
                            holding.signal()
                            let deadline = Date() + 10
                            while store.waitingWriterCount < others, Date() < deadline { usleep(1_000) }
                        }
                        try first(tx)
                    }
                }
                done.leave()
            }.start()
            holding.wait()
            for index in 0..<others {
                done.enter()
                Thread {
                    record("\(index)") { try store.write { try other(index, $0) } }
                    done.leave()
                }.start()
            }
            done.wait()
            return outcomes.all
        }

        /// Queues `first` (its run number passed in), which holds the writer on its first run until `queueOthers` has
        /// queued `others` more writes (each entering `answered`, leaving it from its completion) behind it; returns once
        /// all of them were answered.
        static func heldBatch(_ store: SQLiteStore, others: Int,
                              first: @escaping @Sendable (any StoreTransaction, Int) throws -> Void,
                              queueOthers: (DispatchGroup) -> Void) {
            let runs = Collected<Int>(), release = DispatchSemaphore(value: 0), answered = DispatchGroup()
            answered.enter()
            store.write({ tx in
                runs.append(1)
                let run = runs.all.count
                try first(tx, run)
                if run == 1 { release.wait() }
            }, completion: { _ in answered.leave() })
            queueOthers(answered)
            while store.waitingWriterCount < others { usleep(1_000) }
            release.signal()
            answered.wait()
        }

        @Test("writes waiting together share one COMMIT; a thrower among them rolls back only its own writes")
        func batchedWithSavepoints() throws {
            let database = TestDatabase.temporary()
            defer { database.remove() }
            let store = try Self.migratedStore(database, limits: Self.oneBigBatch)
            let before = store.committedBatchCount
            let outcomes = Self.oneBatch(store, others: 8, first: { try $0.insertLoginAttempt(loginAttempt("first")) }) { index, tx in
                try tx.insertLoginAttempt(loginAttempt("other-\(index)"))
                if index.isMultiple(of: 3) { throw Abort() }
            }
            #expect(store.committedBatchCount - before == 1)
            #expect(outcomes.filter { $0.hasSuffix(" abort") }.count == 3)
            #expect(outcomes.filter { $0.hasSuffix(" ok") }.count == 6)
            let kept = try store.read { tx in try (0..<8).filter { try tx.loginAttempt(state: "other-\($0)") != nil } }
            #expect(kept == [1, 2, 4, 5, 7])
            #expect(try store.read { try $0.loginAttempt(state: "first") } != nil)
        }

        @Test("a write that throws after writing leaves nothing, and every other write of its batch commits once, its caller getting the value of the run that committed")
        func failedWriteInABatch() throws {
            let database = TestDatabase.temporary()
            defer { database.remove() }
            let store = try Self.migratedStore(database, limits: Self.oneBigBatch)
            let before = store.committedBatchCount
            let outcomes = Collected<(Int, Result<String, any Error>)>()
            Self.heldBatch(store, others: 8, first: { _, _ in }) { answered in
                for index in 0..<8 {
                    answered.enter()
                    store.write({ tx in
                        // A new state on every run: a caller told the state of a run that was undone would not find it.
                        let state = "w\(index)-\(UUID().uuidString)"
                        try tx.insertLoginAttempt(loginAttempt(state))
                        if index == 5 { throw Abort() }
                        return state
                    }, completion: { outcomes.append((index, $0)); answered.leave() })
                }
            }

            #expect(store.committedBatchCount - before == 1)
            var committed: [String] = []
            for (index, outcome) in outcomes.all.sorted(by: { $0.0 < $1.0 }) {
                switch outcome {
                case let .success(state):
                    #expect(index != 5)
                    committed.append(state)
                case let .failure(error):
                    #expect(index == 5 && error is Abort, "write \(index): \(error)")
                }
            }
            #expect(committed.count == 7)
            #expect(try store.read { tx in try committed.allSatisfy { try tx.loginAttempt(state: $0) != nil } })
            let path = database.sqlitePath
            #expect(try scalar("SELECT COUNT(*) AS value FROM login_attempts", in: path) == 7)
        }

        @Test("a write refused before it changed a row leaves its batch as it was; one that threw after writing makes the batch's earlier writes run again",
              arguments: [false, true])
        func refusedBeforeWriting(afterWriting: Bool) throws {
            let database = TestDatabase.temporary()
            defer { database.remove() }
            let store = try Self.migratedStore(database, limits: Self.oneBigBatch)
            let firstRuns = Collected<Int>(), outcomes = Collected<String>()
            Self.heldBatch(store, others: 4, first: { tx, run in
                firstRuns.append(run)
                try tx.insertLoginAttempt(loginAttempt("first-\(run)"))
            }) { answered in
                for index in 0..<4 {
                    answered.enter()
                    store.write({ tx in
                        if index == 2 {
                            // A refusal: it reads (spending nothing: no such attempt), or it writes, and then throws.
                            if afterWriting { try tx.insertLoginAttempt(loginAttempt("refused")) }
                            _ = try tx.consumeLoginAttempt(state: "nobody", now: t0)
                            throw Abort()
                        }
                        try tx.insertLoginAttempt(loginAttempt("other-\(index)"))
                    }, completion: { outcome in
                        outcomes.append((try? outcome.get()) == nil ? "\(index) failed" : "\(index) ok")
                        answered.leave()
                    })
                }
            }
            #expect(outcomes.all.sorted() == ["0 ok", "1 ok", "2 failed", "3 ok"])
            #expect(firstRuns.all.count == (afterWriting ? 2 : 1))
            let path = database.sqlitePath
            #expect(try scalar("SELECT COUNT(*) AS value FROM login_attempts WHERE state = 'refused'", in: path) == 0)
            #expect(try scalar("SELECT COUNT(*) AS value FROM login_attempts", in: path) == 4)
        }

        @Test("while writes keep coming so the queue never runs empty, each answered write lets go of what it held")
        func answeredWritesAreReleased() throws {
            let database = TestDatabase.temporary()
            defer { database.remove() }
            let store = try Self.migratedStore(database, limits: .init())
            /// Holds the writer inside a write until `release`, with more writes queued behind it.
            final class Hold: Sendable {
                let entered = DispatchSemaphore(value: 0)
                let release = DispatchSemaphore(value: 0)
                func start(_ store: SQLiteStore) {
                    store.write({ [self] _ in entered.signal(); release.wait() }, completion: { _ in })
                    entered.wait()
                }
            }
            final class Canary: Sendable {}
            final class Watched: @unchecked Sendable {
                let lock = NSLock()
                var canaries: [Int: () -> Bool] = [:]  // index -> "still alive?"
            }
            let first = Hold(), tail = Hold()
            first.start(store)
            let watched = Watched()
            let answered = Collected<Int>()
            for index in 0..<200 {
                let canary = Canary()
                weak let weakCanary = canary
                watched.lock.withLock { watched.canaries[index] = { weakCanary != nil } }
                store.write({ try $0.insertLoginAttempt(loginAttempt("c\(index)")) }, completion: { _ in
                    withExtendedLifetime(canary) { answered.append(index) }
                })
            }
            // The tail holds the writer again with one more write queued behind it: the queue is not empty.
            let finished = DispatchSemaphore(value: 0)
            Thread { tail.start(store); finished.signal() }.start()
            while store.waitingWriterCount < 201 { usleep(1_000) }
            store.write({ _ in }, completion: { _ in })
            first.release.signal()
            finished.wait()
            let called = answered.all
            #expect(called.count >= 128, "batches of 64 commit before the tail runs: \(called.count) answered")
            let alive = watched.lock.withLock { called.filter { watched.canaries[$0]!() } }
            #expect(alive.isEmpty, "\(alive.count) answered writes still hold their callbacks")
            tail.release.signal()
        }

        @Test("a failing COMMIT fails every caller of its batch, keeps none of their writes, and the store goes on")
        func failingCommitFailsTheBatch() throws {
            let database = TestDatabase.temporary()
            defer { database.remove() }
            let store = try Self.migratedStore(database, limits: Self.oneBigBatch)
            // A foreign key checked only at COMMIT: the session names a user that does not exist.
            let outcomes = Self.oneBatch(store, others: 5, first: { tx in
                try (tx as? SQLTransaction<SQLiteConnection>)?.connection.run("PRAGMA defer_foreign_keys = ON")
                try tx.insertSession(session("orphan", userID: 999))
            }) { index, tx in
                try tx.insertLoginAttempt(loginAttempt("other-\(index)"))
            }
            #expect(outcomes.count == 6)
            #expect(outcomes.allSatisfy { $0.contains("error: database conflict: FOREIGN KEY constraint failed") }, "\(outcomes)")
            let kept = try store.read { tx in try (0..<5).filter { try tx.loginAttempt(state: "other-\($0)") != nil } }
            #expect(kept == [])
            try store.write { try $0.insertLoginAttempt(loginAttempt("after")) }
            #expect(try store.read { try $0.loginAttempt(state: "after") } != nil)
        }
    }
}
