import Foundation
import WorkerThreads

/// Copies WAL pages back into the database file on its own thread, so that no write
/// pays for a checkpoint (the writer runs with `wal_autocheckpoint` off).
///
/// Every `interval` after writes it runs a PASSIVE checkpoint (never waits for readers
/// or writers). Under a steady stream of writes that never finishes: frames keep arriving
/// while it copies, so the WAL never starts over and grows without bound. So when the WAL
/// holds more than `walFrameLimit` frames, a second PASSIVE checkpoint runs with writes
/// paused, copying the few frames the first one left; the next write then starts the WAL
/// from the beginning. Once writes have stopped for `idleAfter` it runs one TRUNCATE
/// checkpoint, which also shrinks the WAL file to zero. `stop()` ends the thread and
/// waits for it.
final class SQLiteCheckpointer: @unchecked Sendable {
    struct Timing {
        var interval: Duration = .milliseconds(200)
        var idleAfter: Duration = .seconds(2)
        /// About 16 MiB of 4 KiB pages.
        var walFrameLimit = 4_096
    }

    /// Runs its argument while no write is in progress.
    typealias WritesPaused = @Sendable (() -> Void) -> Void

    private let connection: SQLiteConnection
    private let timing: Timing
    private let condition = NSCondition()
    // Under `condition`:
    private var commitsSinceCheckpoint = 0
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

    /// Called by the writer after each commit. Many commits since the last checkpoint
    /// wake the checkpointer before its interval is up.
    func noteCommit() {
        condition.withLock {
            commitsSinceCheckpoint += 1
            if commitsSinceCheckpoint == Self.commitsBeforeEarlyCheckpoint {
                condition.signal()
            }
        }
    }

    private static let commitsBeforeEarlyCheckpoint = 256

    /// Checkpoints run so far (PASSIVE and TRUNCATE).
    var checkpointCount: Int {
        condition.withLock { checkpointsRun }
    }

    func stop() {
        let wasRunning = condition.withLock {
            let running = started && !stopped
            stopped = true
            condition.signal()
            return running
        }
        if wasRunning {
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
                if checkpoint("PASSIVE").walFrames > timing.walFrameLimit {
                    pausingWrites { checkpoint("PASSIVE") }
                }
            } else if !truncated, now - lastWrite >= timing.idleAfter {
                truncated = checkpoint("TRUNCATE").complete
            }
        }
        exited.signal()
    }

    /// Waits one interval; nil once stopped, else the commits since the last tick.
    private func nextTick() -> Int? {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(Self.seconds(timing.interval))
        while !stopped, commitsSinceCheckpoint < Self.commitsBeforeEarlyCheckpoint, condition.wait(until: deadline) {}
        guard !stopped else { return nil }
        let commits = commitsSinceCheckpoint
        commitsSinceCheckpoint = 0
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
