import Foundation
import WorkerThreads

/// Runs concurrent writes in shared SQLite transactions ("group commit") on one writer thread.
///
/// Callers queue their closures and wait (or are called back). The writer thread opens a transaction (the batch), runs the
/// queued closures in it one after another, and commits when the queue is empty, the batch is full or old. Each
/// caller keeps its own all-or-nothing outcome: a caller whose closure threw is answered at once and none of its
/// writes stay; one whose closure succeeded is answered only after that COMMIT succeeded, and if the COMMIT fails,
/// every such caller of the batch gets its error. The sync and the page writes of a commit are paid once per batch
/// instead of once per call, and because one thread runs every closure back to back, the writer never sits idle
/// while the next caller's thread wakes up.
///
/// Closures run without a SAVEPOINT each while none fails, which is nearly always: a savepoint per closure (its two
/// statements, and the copy of every page the closure first changes within it) was 15 % of the writer's work per
/// sign-in, and the writer is the one thread every write waits for. When a closure throws, its partial writes go
/// with the whole transaction (ROLLBACK), and the closures that had succeeded in the batch run again, in order, each
/// in its own savepoint, as does the rest of the batch and the next one; a batch without a failure lets the one
/// after it go without savepoints again. A closure that throws before it changed any row (a rate limit, a login
/// attempt already spent) needs none of that. So closures must change nothing but the database and what they
/// return: a closure may run twice before its batch commits, and only the last run counts.
final class SQLiteGroupCommit: @unchecked Sendable {
    struct Limits {
        /// Successful writes after which a batch commits even if more callers wait.
        var maxWrites = 64
        /// Age after which a batch commits even if more callers wait.
        var maxDuration: Duration = .milliseconds(10)
    }

    private typealias Job = QueuedWrite<SQLiteConnection>

    /// The open transaction and the callers whose closures succeeded in it.
    private struct Batch {
        var startedAt = ContinuousClock.now
        var succeeded: [Job] = []
        /// Set when a failed closure could not be undone on its own: the whole batch is lost.
        var failure: (any Error)?
        /// Each closure in a savepoint of its own: after a failure in this batch or the one before.
        var withSavepoints: Bool
        /// A closure threw in this batch after it had changed rows (one refused before changing any does not count).
        var hadFailedWrite = false
    }

    private static let savepoint = "SAVEPOINT store_write"
    private let connection: SQLiteConnection
    private let limits: Limits
    private let afterCommit: () -> Void
    private let condition = NSCondition()
    // Under `condition`:
    private var queue = FIFOQueue<Job>()
    private var stopping = false
    private var writerThreadExited = false
    private var committedBatches = 0
    private var committedWrites = 0
    private var replayedBatches = 0
    private var writerThread: Thread?
    /// Writer thread only: whether the last batch had a closure that threw (the next one then uses savepoints).
    private var lastBatchHadFailedWrite = false

    init(connection: SQLiteConnection, limits: Limits = Limits(), afterCommit: @escaping () -> Void = {}) {
        self.connection = connection
        self.limits = limits
        self.afterCommit = afterCommit
        let thread = Thread { [self] in
            // Foundation's name stays inside Foundation; the kernel's name is what `top -H`, perf and
            // `scripts/bench` (its writer figure) see.
            ThreadName.setCurrent("sqlite-writer")
            runWriter()
        }
        thread.name = "sqlite-writer"
        writerThread = thread
        thread.start()
    }

    /// What the writer committed so far (commits are batches).
    var counts: GroupCommitCounts {
        condition.withLock { GroupCommitCounts(commits: committedBatches, writes: committedWrites, replays: replayedBatches) }
    }

    /// Callers whose closure waits in the queue right now (not counting the one running).
    var waitingWriterCount: Int {
        condition.withLock { queue.count }
    }

    func write<T>(_ body: (any StoreTransaction) throws -> T) throws -> T {
        try Job.submitAndWait({ connection in try body(SQLTransaction(connection: connection)) }, submit: enqueue)
    }

    /// Queues a write and returns at once; `completion` runs on the writer thread when the write failed, or
    /// after its batch committed (or failed to).
    func write<T: Sendable>(_ body: @escaping @Sendable (any StoreTransaction) throws -> T,
                            completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        do {
            try enqueue(.answering({ connection in try body(SQLTransaction(connection: connection)) }, completion: completion))
        } catch {
            completion(.failure(error))
        }
    }

    /// The connection alone, outside any batch (migrations, checkpoints): an open batch commits first.
    func withExclusiveConnection<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try Job.submitAndWait(isExclusive: true, body, submit: enqueue)
    }

    /// True on the writer thread itself (a write's completion runs there).
    var isOnWriterThread: Bool {
        condition.withLock { Thread.current === writerThread }
    }

    /// Lets the writer finish what is queued, then stops its thread. Later writes fail.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        let onWriterThread = Thread.current === writerThread
        while !writerThreadExited && !onWriterThread {
            condition.wait()
        }
        writerThread = nil
        condition.unlock()
    }

    private func enqueue(_ job: Job) throws {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping else { throw StoreError.database("the store is closed") }
        queue.append(job)
        condition.signal()
    }

    // MARK: - The writer thread

    private func runWriter() {
        var batch: Batch?
        while true {
            guard let job = nextJob(waiting: batch == nil) else {
                if let open = batch {
                    commit(open)
                    batch = nil
                    continue
                }
                break  // stopping, and nothing is queued
            }
            if job.isExclusive {
                if let open = batch { commit(open) }
                batch = nil
                runExclusive(job)
                continue
            }
            batch = run(job, in: batch)
            if let open = batch, isFull(open) {
                commit(open)
                batch = nil
            }
        }
        condition.withLock {
            writerThreadExited = true
            condition.broadcast()
        }
    }

    /// The next queued job; nil when none is queued and either `waiting` is false or the writer stops.
    private func nextJob(waiting: Bool) -> Job? {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty {
            if !waiting || stopping { return nil }
            condition.wait()
        }
        return queue.popFirst()
    }

    private func isFull(_ batch: Batch) -> Bool {
        batch.failure != nil || batch.succeeded.count >= limits.maxWrites
            || ContinuousClock.now - batch.startedAt >= limits.maxDuration
    }

    private func runExclusive(_ job: Job) {
        do {
            try job.run(on: connection)
            job.answer()
        } catch {
            job.answer(failure: error)
        }
    }

    /// Runs one write in the open batch (opening one if needed); returns the batch, nil if none could open.
    private func run(_ job: Job, in open: Batch?) -> Batch? {
        var batch: Batch
        do {
            batch = try open ?? openBatch(withSavepoints: lastBatchHadFailedWrite)
        } catch {
            job.answer(failure: error)
            return nil
        }
        guard !batch.withSavepoints else {
            return runInSavepoint(job, in: batch)
        }
        let changesBefore = connection.totalChanges
        do {
            try job.run(on: connection)
            batch.succeeded.append(job)
            return batch
        } catch {
            // Refused before it wrote anything (a rate limit, a login attempt already spent): nothing to undo.
            if connection.totalChanges == changesBefore, connection.isInsideTransaction {
                job.answer(failure: error)
                return batch
            }
            let replayed = replayWithSavepoints(batch)
            job.answer(failure: error)
            return replayed
        }
    }

    /// After a closure that ran without a savepoint threw: undoes the whole transaction, with whatever that closure
    /// wrote before it threw, and runs the batch's succeeded closures again, each in its own savepoint. Returns the
    /// new batch, nil if no transaction could open (then every one of them is answered with that error).
    private func replayWithSavepoints(_ failed: Batch) -> Batch? {
        condition.withLock { replayedBatches += 1 }
        var batch: Batch
        do {
            batch = try openBatch(withSavepoints: true)
        } catch {
            if connection.isInsideTransaction { _ = try? connection.run("ROLLBACK") }
            for caller in failed.succeeded { caller.answer(failure: error) }
            lastBatchHadFailedWrite = true
            return nil
        }
        batch.startedAt = failed.startedAt
        batch.hadFailedWrite = true
        for caller in failed.succeeded {
            if batch.failure != nil {
                batch.succeeded.append(caller)  // the batch is lost: answered with its failure when it ends
            } else {
                batch = runInSavepoint(caller, in: batch)
            }
        }
        return batch
    }

    /// Runs one write inside a savepoint of the open batch, so that if it throws only its own writes are undone.
    private func runInSavepoint(_ job: Job, in open: Batch) -> Batch {
        var batch = open
        do {
            try connection.run(Self.savepoint)
        } catch {
            job.answer(failure: error)
            return batch
        }
        let changesBefore = connection.totalChanges
        do {
            try job.run(on: connection)
            try connection.run("RELEASE store_write")
            batch.succeeded.append(job)
        } catch {
            if connection.totalChanges != changesBefore { batch.hadFailedWrite = true }
            if !undoSavepoint(), batch.failure == nil {
                batch.failure = StoreError.database("the shared write transaction was rolled back by a failed write")
            }
            job.answer(failure: error)
        }
        return batch
    }

    private func openBatch(withSavepoints: Bool) throws -> Batch {
        if connection.isInsideTransaction {
            // The batch being replayed, or left open if an earlier ROLLBACK failed; never build on top of it.
            try connection.run("ROLLBACK")
        }
        // IMMEDIATE takes the write lock up front, so a transaction that read first
        // cannot fail later with SQLITE_BUSY when it starts writing.
        try connection.run("BEGIN IMMEDIATE")
        return Batch(withSavepoints: withSavepoints)
    }

    /// Undoes the failed caller's writes only; false when that is impossible (SQLite already rolled the whole
    /// transaction back, e.g. on SQLITE_FULL).
    private func undoSavepoint() -> Bool {
        connection.isInsideTransaction
            && (try? connection.run("ROLLBACK TO store_write")) != nil
            && (try? connection.run("RELEASE store_write")) != nil
    }

    /// COMMIT (or, for a lost batch, ROLLBACK) and answer every caller waiting for it.
    private func commit(_ batch: Batch) {
        lastBatchHadFailedWrite = batch.hadFailedWrite
        var failure = batch.failure
        if failure == nil {
            do {
                try connection.run("COMMIT")
            } catch {
                failure = error
            }
        }
        if failure != nil, connection.isInsideTransaction {
            _ = try? connection.run("ROLLBACK")
        }
        if failure == nil {
            condition.withLock {
                committedBatches += 1
                committedWrites += batch.succeeded.count
            }
            afterCommit()
        }
        for caller in batch.succeeded {
            caller.answer(failure: failure)
        }
    }
}
