import Foundation
import Testing
import WorkerThreads

@Suite("Worker pool") struct WorkerPoolTests {
    /// Stops its pool when it goes, as `PostgresStore` stops its write workers.
    final class StopsThePool: Sendable {
        let pool: WorkerPool
        let stopped: DispatchSemaphore

        init(_ pool: WorkerPool, stopped: DispatchSemaphore) {
            self.pool = pool
            self.stopped = stopped
        }

        deinit {
            pool.stop()
            stopped.signal()
        }
    }

    @Test("a job holding the last reference to its pool's owner lets the owner stop the pool from the worker")
    func lastReferenceInAJob() {
        let pool = WorkerPool(maxThreads: 1, name: "worker-pool-test")
        let stopped = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        do {
            let owner = StopsThePool(pool, stopped: stopped)
            pool.run { [owner] in
                release.wait()
                _ = owner
            }
        }
        release.signal()  // the job now holds the only reference
        guard stopped.wait(timeout: .now() + 10) == .success else {
            // The worker is stuck holding the pool's lock: asking the pool anything more would hang this test too.
            Issue.record("the worker deadlocked in the owner's deinit")
            return
        }
        #expect(!pool.run {}, "a stopped pool takes no job")
    }
}
