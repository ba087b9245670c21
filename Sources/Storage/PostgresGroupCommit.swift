import Foundation
import WorkerThreads

/// Runs concurrent READ COMMITTED writes of several callers in one PostgreSQL transaction ("group commit").
///
/// A sign-in's write is a handful of small statements in two round trips, and most of what PostgreSQL spent on it was
/// the transaction around them and the round trips: the BEGIN and COMMIT, a snapshot, two wake-ups of the backend
/// and of the caller. A lane thread takes every write waiting (up to `Limits.maxWrites`), runs their closures one
/// after another in one transaction on one connection, and commits: what a closure sends without waiting goes out
/// with the next statement that waits, or before the COMMIT. A sign-in waits for nothing (its member's row is read
/// by a finisher, `SQLConnection.query(finishing:)`), so N sign-ins cost one transaction and two round trips instead
/// of N and 2N. A write that finds no other waiting runs alone, as it would without this, so a quiet server answers
/// as fast. Finishers run before the COMMIT; one that throws rolls the batch back like a failed statement.
///
/// The batch's sign-ins go first, together when they can (one statement per kind of write,
/// `PostgresCoalescedSignIns`); the other closures run one after another, each seeing what the ones before it wrote.
/// The callers wait concurrently, so the batch is the same as these writes run in turn in an order they could have
/// run in. Each caller keeps its own all-or-nothing outcome:
/// - a closure that throws before any statement of its own changed or returned a row (a refused rate limit) is
///   answered at once, and the batch goes on;
/// - a closure that throws after that, a statement that fails, or a lock wait past `Limits.lockWait` (another
///   instance's batch holding a row this one needs, maybe waiting for one of ours) rolls the batch back, and every
///   closure of it runs again alone, in order, with the usual retries. (A deferred statement's failure comes back in
///   the next closure's round trip, so it cannot be pinned on one closure: each gets its own outcome alone.)
/// - callers are answered only after the COMMIT. If the connection is lost while committing, whether the batch
///   committed is unknown: every caller gets the failure, as a caller of a lone write does.
///
/// So a closure may run more than once before its write commits; `PostgresStore.write` already asks that of closures.
final class PostgresGroupCommit: @unchecked Sendable {
    struct Limits {
        /// Threads that each run one batch at a time, on a connection borrowed from the pool for it.
        var lanes = 2
        /// Writes a lane takes into one batch at most. (With 16, 32 and 64 sign-ins waiting on one instance, batches
        /// of 16 and of 32 cost PostgreSQL about the same per sign-in; more would only hold rows locked longer.)
        var maxWrites = 32
        /// How long a statement of a batch waits for a row lock before the batch runs its writes alone instead.
        var lockWait = "100ms"
    }

    /// How a lane reaches the store: a connection for a batch, a write run alone, and the store's error text.
    struct Host: Sendable {
        let borrow: @Sendable () throws -> PostgresConnection
        let giveBack: @Sendable (PostgresConnection) -> Void
        /// One write in a READ COMMITTED transaction of its own, retried as the store retries.
        let runAlone: @Sendable (_ body: (any StoreTransaction) throws -> Void) throws -> Void
        let scrub: @Sendable (String) -> String
    }

    private typealias Job = QueuedWrite<any StoreTransaction>

    private let host: Host
    private let limits: Limits
    private let condition = NSCondition()
    // Under `condition`:
    private var queue = FIFOQueue<Job>()
    private var stopping = false
    private var runningLanes = 0
    /// Writes run alone count as commits of one write.
    private var counted = GroupCommitCounts()
    private var laneThreads: [Thread] = []

    init(host: Host, limits: Limits = Limits()) {
        self.host = host
        self.limits = limits
        runningLanes = limits.lanes
        for _ in 0..<limits.lanes {
            let thread = Thread { [self] in
                // The kernel's name is what `top -H`, perf and `scripts/bench` see.
                ThreadName.setCurrent("postgres-batch")
                runLane()
            }
            thread.name = "postgres-batch"
            laneThreads.append(thread)
        }
        for thread in laneThreads { thread.start() }
    }

    var counts: GroupCommitCounts { condition.withLock { counted } }

    /// Writes waiting for a lane right now.
    var waitingWriteCount: Int { condition.withLock { queue.count } }

    /// `mayCoalesce`: a sign-in, which may go out together with the batch's other sign-ins (`PostgresCoalescedSignIns`).
    func write<T>(mayCoalesce: Bool = false, _ body: (any StoreTransaction) throws -> T) throws -> T {
        try Job.submitAndWait(mayCoalesce: mayCoalesce, body, submit: enqueue)
    }

    /// Queues a write; `completion` runs on a lane thread once it failed, or its transaction committed.
    func write<T: Sendable>(mayCoalesce: Bool = false, _ body: @escaping @Sendable (any StoreTransaction) throws -> T,
                            completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        do {
            try enqueue(.answering(mayCoalesce: mayCoalesce, body, completion: completion))
        } catch {
            completion(.failure(error))
        }
    }

    /// Lets the lanes finish what is queued, then stops them; later writes fail.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        // A lane may drop the last reference to the store (in a caller's completion): it cannot wait for itself.
        let onLane = laneThreads.contains { $0 === Thread.current }
        while runningLanes > 0 && !onLane {
            condition.wait()
        }
        condition.unlock()
    }

    private func enqueue(_ job: Job) throws {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping else { throw StoreError.database("the store is closed") }
        queue.append(job)
        condition.signal()
    }

    // MARK: - The lanes

    private func runLane() {
        while let jobs = nextJobs() {
            if jobs.count == 1 {
                runAlone(jobs[0])
            } else {
                runBatch(jobs)
            }
        }
        condition.withLock {
            runningLanes -= 1
            condition.broadcast()
        }
    }

    /// Waits for a write, then takes it and those queued behind it, up to `maxWrites`; nil once stopping with none left.
    private func nextJobs() -> [Job]? {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty {
            if stopping { return nil }
            condition.wait()
        }
        var jobs: [Job] = []
        while jobs.count < limits.maxWrites, let job = queue.popFirst() { jobs.append(job) }
        return jobs
    }

    /// Runs one write in a transaction of its own. When no connection could be had, it and every write still queued
    /// are answered with that failure, which is returned: each would otherwise wait out the connect timeout in turn
    /// on this lane (minutes for a queue, where a caller of the store is promised an answer within that timeout).
    @discardableResult
    private func runAlone(_ job: Job) -> (any Error)? {
        do {
            host.giveBack(try host.borrow())  // kept idle in the pool for the write, which takes it at once
        } catch {
            failQueued(with: error, also: [job])
            return error
        }
        do {
            try host.runAlone { try job.run(on: $0) }
            condition.withLock {
                counted.commits += 1
                counted.writes += 1
            }
            job.answer()
        } catch {
            job.answer(failure: error)
        }
        return nil
    }

    private func failQueued(with error: any Error, also jobs: some Sequence<Job>) {
        let queued = condition.withLock {
            var taken: [Job] = []
            while let job = queue.popFirst() { taken.append(job) }
            return taken
        }
        for job in jobs { job.answer(failure: error) }
        for job in queued { job.answer(failure: error) }
    }

    private func runBatch(_ jobs: [Job]) {
        let connection: PostgresConnection
        do {
            connection = try host.borrow()
        } catch {
            failQueued(with: error, also: jobs)
            return
        }
        switch run(jobs, on: connection) {
        case let .committed(succeeded, refused):
            host.giveBack(connection)
            condition.withLock {
                counted.commits += 1
                counted.writes += succeeded.count
            }
            for job in succeeded { job.answer() }
            for (job, error) in refused { job.answer(failure: error) }
        case let .unknown(failure, refused):
            host.giveBack(connection)
            for job in jobs where !refused.contains(where: { $0.job === job }) { job.answer(failure: failure) }
            for (job, error) in refused { job.answer(failure: error) }
        case .rolledBack:
            host.giveBack(connection)
            condition.withLock { counted.replays += 1 }
            for (index, job) in jobs.enumerated() {
                guard let unreachable = runAlone(job) else { continue }
                for rest in jobs[(index + 1)...] { rest.answer(failure: unreachable) }
                break
            }
        }
    }

    private enum BatchOutcome {
        case committed(succeeded: [Job], refused: [(job: Job, error: any Error)])
        /// The connection was lost while the COMMIT was on its way: it may have committed.
        case unknown(any Error, refused: [(job: Job, error: any Error)])
        /// Nothing of the batch stays.
        case rolledBack
    }

    private func run(_ jobs: [Job], on connection: PostgresConnection) -> BatchOutcome {
        connection.clearFailure()
        let session = PostgresSession(connection: connection, scrub: host.scrub)
        let transaction = SQLTransaction(connection: session, updatedMembers: UpdatedMembers())
        // The batch's callers wait concurrently, so any order of their writes is one they could have run in: its
        // sign-ins go first, together if they can, then the other writes closure by closure.
        let signIns = jobs.filter(\.mayCoalesce)
        let coalesced = signIns.count > 1 ? PostgresCoalescedSignIns(recording: signIns) : nil
        var succeeded: [Job] = []
        var refused: [(job: Job, error: any Error)] = []
        var committing = false
        do {
            connection.begin(PostgresUnitOfWork.beginReadCommitted)
            try connection.send("SET LOCAL lock_timeout = '\(limits.lockWait)'")
            if let coalesced {
                try coalesced.run(on: session)
                succeeded = signIns
            }
            for job in jobs where coalesced == nil || !job.mayCoalesce {
                let mark = connection.statementsSent, missedBefore = connection.lastMissedRequirement
                let finishersBefore = connection.waitingFinishers
                do {
                    try job.run(on: transaction)
                    succeeded.append(job)
                } catch {
                    // Refused before any statement of its own changed or returned a row, and not for a statement of
                    // an earlier write (whose results come back in this one's first round trip): nothing to undo.
                    // Nor did it leave a finisher waiting, which would write for it at the commit.
                    let missedOwn = connection.lastMissedRequirement == missedBefore
                        || connection.lastMissedRequirement > mark
                    guard connection.lastFailure == nil, !connection.hasUnansweredStatements, missedOwn,
                          connection.lastStatementWithRows <= mark, connection.waitingFinishers <= finishersBefore,
                          connection.isInsideTransaction else { throw error }
                    refused.append((job, error))
                }
            }
            committing = true
            try connection.commit()
            if coalesced != nil { condition.withLock { counted.coalescedCommits += 1 } }
            return .committed(succeeded: succeeded, refused: refused)
        } catch {
            connection.abandonUnitOfWork()
            if committing, !connection.isUsable {
                return .unknown((error as? PostgresFailure)?.thrownToCaller(scrub: host.scrub) ?? error, refused: refused)
            }
            if connection.isUsable && connection.isInsideTransaction {
                try? connection.execute("ROLLBACK")
            }
            return .rolledBack
        }
    }
}
