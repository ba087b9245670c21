import Foundation

/// Runs concurrent writes in shared SQLite transactions ("group commit").
///
/// There is one writer connection and at most one open transaction on it, the batch.
/// A caller takes the writer (one closure runs at a time), runs its closure inside a
/// SAVEPOINT of the batch — released when it returns, rolled back when it throws, so
/// each caller keeps its own all-or-nothing outcome — and then hands the writer straight
/// to the next waiting caller, or, when nobody waits or the batch is full or old, commits
/// the batch. A caller whose closure succeeded returns only after that COMMIT succeeded;
/// if the COMMIT fails, every such caller of the batch gets its error. The sync and the
/// page writes of a commit are paid once per batch instead of once per call.
final class SQLiteGroupCommit: @unchecked Sendable {
    struct Limits {
        /// Successful writes after which a batch commits even if more callers wait.
        var maxWrites = 64
        /// Age after which a batch commits even if more callers wait.
        var maxDuration: Duration = .milliseconds(10)
    }

    /// Writes in one batch; read and changed only by the thread holding the writer,
    /// except `failure` and `waiting`, which are under the lock.
    private final class Batch {
        let startedAt = ContinuousClock.now
        var writes = 0
        /// Callers whose closure succeeded, waiting for the COMMIT.
        var waiting: [DispatchSemaphore] = []
        var failure: (any Error)?
    }

    private static let savepoint = "SAVEPOINT store_write"
    private let connection: SQLiteConnection
    private let limits: Limits
    private let afterCommit: () -> Void
    private let lock = NSLock()
    // Under `lock`:
    private var writerHeld = false
    private var waitingWriters: [DispatchSemaphore] = []
    private var batch: Batch?
    private var committedBatches = 0

    init(connection: SQLiteConnection, limits: Limits = Limits(), afterCommit: @escaping () -> Void = {}) {
        self.connection = connection
        self.limits = limits
        self.afterCommit = afterCommit
    }

    /// How many batches have committed so far.
    var commitCount: Int {
        lock.withLock { committedBatches }
    }

    /// Callers waiting for the writer right now.
    var waitingWriterCount: Int {
        lock.withLock { waitingWriters.count }
    }

    func write<T>(_ body: (any StoreTransaction) throws -> T) throws -> T {
        acquireWriter()
        let batch: Batch
        do {
            batch = try openBatch()
        } catch {
            releaseWriter()
            throw error
        }
        let outcome = runInSavepoint(body, in: batch)
        if case .success = outcome {
            batch.writes += 1
        }
        let waitsForCommit = if case .success = outcome { true } else { false }
        try finish(batch, waitingForCommit: waitsForCommit)
        return try outcome.get()
    }

    /// The connection alone, outside any batch (migrations): an open batch commits first.
    func withExclusiveConnection<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        acquireWriter()
        defer { releaseWriter() }
        if let open = lock.withLock({ batch }) {
            commit(open)
        }
        return try body(connection)
    }

    // MARK: - The writer baton

    private func acquireWriter() {
        lock.lock()
        guard writerHeld else {
            writerHeld = true
            lock.unlock()
            return
        }
        let turn = DispatchSemaphore(value: 0)
        waitingWriters.append(turn)
        lock.unlock()
        turn.wait()  // Handed over: `writerHeld` stayed true for us.
    }

    private func releaseWriter() {
        lock.lock()
        if waitingWriters.isEmpty {
            writerHeld = false
            lock.unlock()
        } else {
            let next = waitingWriters.removeFirst()
            lock.unlock()
            next.signal()
        }
    }

    // MARK: - Batches

    private func openBatch() throws -> Batch {
        if let open = lock.withLock({ batch }) {
            return open
        }
        if connection.isInsideTransaction {
            // Left open only if an earlier ROLLBACK failed; never build on top of it.
            try connection.run("ROLLBACK")
        }
        // IMMEDIATE takes the write lock up front, so a transaction that read first
        // cannot fail later with SQLITE_BUSY when it starts writing.
        try connection.run("BEGIN IMMEDIATE")
        let opened = Batch()
        lock.withLock { batch = opened }
        return opened
    }

    private func runInSavepoint<T>(_ body: (any StoreTransaction) throws -> T, in batch: Batch) -> Result<T, any Error> {
        do {
            try connection.run(Self.savepoint)
        } catch {
            return .failure(error)
        }
        do {
            let value = try body(SQLiteTransaction(connection: connection))
            try connection.run("RELEASE store_write")
            return .success(value)
        } catch {
            undoSavepoint(of: batch)
            return .failure(error)
        }
    }

    /// Undoes the failed caller's writes only. If that is impossible (SQLite already
    /// rolled the whole transaction back, e.g. on SQLITE_FULL), the batch is lost and its
    /// earlier callers are told so when it ends.
    private func undoSavepoint(of batch: Batch) {
        if connection.isInsideTransaction,
           (try? connection.run("ROLLBACK TO store_write")) != nil,
           (try? connection.run("RELEASE store_write")) != nil {
            return
        }
        if batch.failure == nil {
            batch.failure = StoreError.database("the shared write transaction was rolled back by a failed write")
        }
    }

    /// Hands the writer to the next caller while the batch has room, else commits it.
    /// A caller whose closure succeeded then waits for the batch's outcome.
    private func finish(_ batch: Batch, waitingForCommit: Bool) throws {
        lock.lock()
        let handOver = batch.failure == nil && !waitingWriters.isEmpty && batch.writes < limits.maxWrites
            && ContinuousClock.now - batch.startedAt < limits.maxDuration
        guard handOver else {
            lock.unlock()
            commit(batch)
            releaseWriter()
            if waitingForCommit, let failure = batch.failure { throw failure }
            return
        }
        let next = waitingWriters.removeFirst()
        let committed = DispatchSemaphore(value: 0)
        if waitingForCommit {
            batch.waiting.append(committed)
        }
        lock.unlock()
        next.signal()
        guard waitingForCommit else { return }
        committed.wait()
        if let failure = lock.withLock({ batch.failure }) { throw failure }
    }

    /// COMMIT (or, for a lost batch, ROLLBACK) and wake every caller waiting for it.
    private func commit(_ batch: Batch) {
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
        let waiting = lock.withLock {
            self.batch = nil
            batch.failure = failure
            if failure == nil { committedBatches += 1 }
            return batch.waiting
        }
        if failure == nil { afterCommit() }
        for caller in waiting {
            caller.signal()
        }
    }
}
