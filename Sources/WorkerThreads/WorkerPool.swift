import Foundation

/// Up to `maxThreads` threads running queued jobs in order, started as the queue needs them. The queue is
/// unbounded: callers bound what they queue.
public final class WorkerPool: @unchecked Sendable {
    private let condition = NSCondition()
    // Under `condition`:
    private var queue = FIFOQueue<@Sendable () -> Void>()
    private var threads = 0
    private var idle = 0
    private var stopping = false
    private let maxThreads: Int
    private let name: String

    public init(maxThreads: Int, name: String) {
        self.maxThreads = max(1, maxThreads)
        self.name = name
    }

    /// Queues `job`; false once stopped (the job will not run).
    @discardableResult
    public func run(_ job: @escaping @Sendable () -> Void) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping else { return false }
        queue.append(job)
        if queue.count > idle && threads < maxThreads {
            threads += 1
            let worker = Thread { [self] in work() }
            worker.name = name
            worker.start()
        } else {
            condition.signal()
        }
        return true
    }

    /// Lets the threads finish what is queued, then exit; later jobs are refused.
    public func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
    }

    private func work() {
        condition.lock()
        while true {
            while queue.isEmpty && !stopping {
                idle += 1
                condition.wait()
                idle -= 1
            }
            var job = queue.popFirst()
            guard job != nil else {
                threads -= 1
                condition.unlock()
                return
            }
            condition.unlock()
            job?()
            // Let go of the job before taking `condition` again. A job may hold the last reference to something whose
            // `deinit` stops this pool (a store whose caller let go of it while its write ran): released later, that
            // `stop()` waited for the lock its own thread held, for ever.
            job = nil
            condition.lock()
        }
    }
}

