import Foundation
import WorkerThreads

/// Copies WAL pages back into the database file on its own thread, so that no write
/// pays for a checkpoint (the writer checkpoints itself only as a safety net, see `SQLiteStore`).
///
/// It runs a PASSIVE checkpoint (never waits for readers or writers) each time the WAL has
/// grown by a quarter of `walFrameLimit`, as the writer reports after each commit, and every
/// `interval` after writes. Under a steady stream of writes that never finishes: frames keep
/// arriving while it copies, so the WAL never starts over and grows without bound. So when
/// the WAL holds more than `walFrameLimit` frames, a last PASSIVE checkpoint runs with writes
/// paused, copying the few frames the others left; the next write then starts the WAL from
/// the beginning. Once writes have stopped for `idleAfter` it runs one TRUNCATE checkpoint,
/// which also shrinks the WAL file to zero. `stop()` ends the thread and, unless told not to, waits for it.
final class SQLiteCheckpointer: @unchecked Sendable {
    struct Timing {
        var interval: Duration = .milliseconds(200)
        var idleAfter: Duration = .seconds(2)
        /// 32 MiB of 2 KiB pages (64 MiB of 4 KiB ones, a database made before 2 KiB pages).
        var walFrameLimit = 16_384
    }

    /// Runs its argument while no write is in progress.
    typealias WritesPaused = @Sendable (() -> Void) -> Void

    private let connection: SQLiteConnection
    private let timing: Timing
    private let condition = NSCondition()
    // Under `condition`:
    private var commitsSinceCheckpoint = 0
    private var framesSinceCheckpoint = 0
    private var lastSeenWALFrames = 0
    private var stopped = false
    private var started = false
    private var checkpointsRun = 0
    private let exited = DispatchSemaphore(value: 0)

    init(path: String, timing: Timing = Timing()) throws {
        // A short busy timeout: a TRUNCATE checkpoint waits for readers and blocks
        // writers meanwhile; when busy it gives up and runs at the next idle moment.
        connection = try SQLiteConnection(path: path, setup: "PRAGMA busy_timeout = 100;")
        self.timing = timing
    }

    func start(pausingWrites: @escaping WritesPaused) {
        condition.withLock { started = true }
        let thread = Thread { [self] in
            ThreadName.setCurrent("sqlite-checkpointer")
            run(pausingWrites)
        }
        thread.name = "sqlite-checkpointer"
        thread.start()
    }

    /// Called by the writer after each commit, with the frames its WAL then holds. Once a quarter of `walFrameLimit`
    /// has been added since the last checkpoint, the checkpointer wakes before its interval is up: under a stream of
    /// sign-ins the WAL grows by tens of thousands of frames a second, so a checkpointer that only woke on its interval
    /// (or after a number of commits) fell behind, and the writer's own checkpoint (see `SQLiteStore`) took over, with
    /// the sign-ins waiting through its two syncs.
    func noteCommit(walFrames: Int) {
        condition.withLock {
            commitsSinceCheckpoint += 1
            let wasBelow = framesSinceCheckpoint < wakeAfterFrames
            // A WAL that started over counts from zero again.
            framesSinceCheckpoint += walFrames >= lastSeenWALFrames ? walFrames - lastSeenWALFrames : walFrames
            lastSeenWALFrames = walFrames
            if wasBelow, framesSinceCheckpoint >= wakeAfterFrames {
                condition.signal()
            }
        }
    }

    private var wakeAfterFrames: Int { max(1, timing.walFrameLimit / 4) }

    /// Checkpoints run so far (PASSIVE and TRUNCATE).
    var checkpointCount: Int {
        condition.withLock { checkpointsRun }
    }

    /// Ends the thread, and waits for it unless told not to (it may be waiting for the caller's own thread).
    func stop(waitingForItsThread: Bool = true) {
        let wasRunning = condition.withLock {
            let running = started && !stopped
            stopped = true
            condition.signal()
            return running
        }
        if wasRunning && waitingForItsThread {
            exited.wait()
        }
    }

    private func run(_ pausingWrites: WritesPaused) {
        var lastWrite = ContinuousClock.now
        var truncated = true
        while let commits = nextTick() {
            let now = ContinuousClock.now
            if commits > 0 {
                lastWrite = now
                truncated = false
                if checkpointAndSync() > timing.walFrameLimit {
                    // What the paused checkpoint copies and syncs is what arrived since the last one: a few more
                    // rounds first, each copying what came in during the one before, shorten the pause.
                    for _ in 0..<Self.catchUpRounds {
                        let copied = checkpointAndSync()
                        if condition.withLock({ lastSeenWALFrames }) - copied <= Self.framesLeftForPause { break }
                    }
                    try? connection.sync(.writeAheadLog)
                    pausingWrites { checkpoint("PASSIVE") }
                }
            } else if !truncated, now - lastWrite >= timing.idleAfter {
                truncated = checkpoint("TRUNCATE").complete
            }
        }
        exited.signal()
    }

    private static let catchUpRounds = 3
    private static let framesLeftForPause = 256

    /// A PASSIVE checkpoint, then a sync of the database file; returns the frames the WAL held when it began (all of
    /// them copied). SQLite syncs the database file only after a checkpoint that reached the WAL's end, which under a
    /// stream of writes only the paused one does: that sync then flushed every page copied since the last one, tens
    /// of megabytes, while the writes waited. Flushed here, off the writer's path, the paused one has little to flush.
    private func checkpointAndSync() -> Int {
        let walFrames = checkpoint("PASSIVE").walFrames
        try? connection.sync(.database)
        return walFrames
    }

    /// Waits one interval, or until woken by the WAL's growth; nil once stopped, else the commits since the last tick.
    private func nextTick() -> Int? {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(Self.seconds(timing.interval))
        while !stopped, framesSinceCheckpoint < wakeAfterFrames, condition.wait(until: deadline) {}
        guard !stopped else { return nil }
        let commits = commitsSinceCheckpoint
        commitsSinceCheckpoint = 0
        framesSinceCheckpoint = 0
        return commits
    }

    /// `complete` when it was not blocked; `walFrames` counts the frames in the WAL.
    @discardableResult
    private func checkpoint(_ mode: String) -> (complete: Bool, walFrames: Int) {
        let rows = (try? connection.query("PRAGMA wal_checkpoint(\(mode))") { row in
            (busy: try row.requiredInteger("busy"), log: try row.requiredInteger("log"))
        }) ?? []
        condition.withLock { checkpointsRun += 1 }
        guard let result = rows.first else { return (false, 0) }
        return (result.busy == 0, Int(result.log))
    }

    private static func seconds(_ duration: Duration) -> TimeInterval {
        let (seconds, attoseconds) = duration.components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
