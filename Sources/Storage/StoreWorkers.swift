import Foundation

/// Threads that run a store's blocking calls for callers that must not wait (`Store.write(_:completion:)` on
/// PostgreSQL, whose writes are network round trips). One thread per pooled connection: more would only wait
/// for a connection. Jobs run in the order queued; the queue is unbounded, its callers are bounded (the HTTP
/// listener's connection limit).
final class StoreWorkers: @unchecked Sendable {
    private let condition = NSCondition()
    private var queue: [@Sendable () -> Void] = []
    private var queueStart = 0
    private var threads = 0
    private var idle = 0
    private var stopping = false
    private let maxThreads: Int
    private let name: String

    init(maxThreads: Int, name: String) {
        self.maxThreads = max(1, maxThreads)
        self.name = name
    }

    /// Queues `job`; false once stopped (the job will not run).
    @discardableResult
    func run(_ job: @escaping @Sendable () -> Void) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping else { return false }
        queue.append(job)
        if queue.count - queueStart > idle && threads < maxThreads {
            threads += 1
            let worker = Thread { [self] in work() }
            worker.name = name
            worker.start()
        } else {
            condition.signal()
        }
        return true
    }

    /// Lets the workers finish what is queued, then exit.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
    }

    private func work() {
        condition.lock()
        while true {
            while queueStart == queue.count && !stopping {
                idle += 1
                condition.wait()
                idle -= 1
            }
            if queueStart == queue.count {
                threads -= 1
                condition.unlock()
                return
            }
            let job = queue[queueStart]
            queueStart += 1
            if queueStart == queue.count {
                queue.removeAll(keepingCapacity: true)
                queueStart = 0
            } else if queueStart >= 64 && queueStart * 2 >= queue.count {
                queue.removeFirst(queueStart)
                queueStart = 0
            }
            condition.unlock()
            job()
            condition.lock()
        }
    }
}
