import CMicroHTTPD
import Foundation
import Synchronization

/// Thrown by a responder running on a listener thread, before any side effect, when answering needs something
/// slow (a call to another server). The listener then suspends the connection and runs the whole responder
/// chain again for the same request on a worker thread, where `Request.isOffListener` is true, so no listener
/// thread (each serves many connections) ever waits. Throwing it off the listener is a bug and answers 500.
public struct OffListenerRequired: Error, Sendable, CustomStringConvertible {
    public init() {}
    public var description: String { "this request must be answered off the listener thread" }
}

/// A bounded pool of worker threads for requests moved off the listener. A slot is reserved before the
/// connection is suspended, so a full pool is answered at once (503) instead of queueing without bound.
final class OffListenerPool: @unchecked Sendable {
    private let condition = NSCondition()
    private var queue: [@Sendable () -> Void] = []
    private var queueHead = 0
    private var reserved = 0
    private var busy = 0
    private var threads = 0
    private var idle = 0
    private var stopping = false
    let maxWorkers: Int
    let maxQueued: Int

    init(maxWorkers: Int, maxQueued: Int) {
        self.maxWorkers = max(1, maxWorkers)
        self.maxQueued = max(0, maxQueued)
    }

    /// Promises room for one job; false when every worker is busy and the queue is full, or the pool stopped.
    func reserve() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping, busy + (queue.count - queueHead) + reserved < maxWorkers + maxQueued else { return false }
        reserved += 1
        return true
    }

    /// Runs a job in a slot taken with `reserve()`.
    func run(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        reserved -= 1
        queue.append(job)
        let waiting = queue.count - queueHead
        if waiting > idle && threads < maxWorkers {
            threads += 1
            let worker = Thread { [self] in work() }
            worker.name = "off-listener"
            worker.start()
        } else {
            condition.signal()
        }
        condition.unlock()
    }

    /// Jobs running, queued or reserved.
    var occupied: Int {
        condition.lock()
        defer { condition.unlock() }
        return busy + (queue.count - queueHead) + reserved
    }

    /// Gives back a slot taken with `reserve()` that will not be used.
    func cancelReservation() {
        condition.lock()
        reserved -= 1
        condition.unlock()
    }

    /// Lets the workers finish queued jobs and exit; no new job is accepted.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
    }

    private func work() {
        condition.lock()
        while true {
            while queueHead == queue.count && !stopping {
                idle += 1
                condition.wait()
                idle -= 1
            }
            if queueHead == queue.count {
                threads -= 1
                condition.unlock()
                return
            }
            let job = queue[queueHead]
            queueHead += 1
            if queueHead > 64 && queueHead * 2 > queue.count {
                queue.removeFirst(queueHead)
                queueHead = 0
            }
            busy += 1
            condition.unlock()
            job()
            condition.lock()
            busy -= 1
        }
    }
}

/// A libmicrohttpd connection pointer handed to another thread; only `MHD_resume_connection` is called on it.
struct ConnectionHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// One suspended request: the connection to resume, the request (to run again after a suspension), and its
/// outcome once known: the answer a worker produced, or the rest of the work to run on the listener.
final class ParkedRequest: Sendable {
    enum Outcome: Sendable {
        case response(Response)
        case work(@Sendable () throws -> Response)
    }

    let connection: ConnectionHandle
    let request: Request
    /// Set once: by the worker or the resumed work, or by shutdown.
    let outcome = Mutex<Outcome?>(nil)

    init(connection: OpaquePointer, request: Request) {
        self.connection = ConnectionHandle(pointer: connection)
        self.request = request
    }
}

/// Every suspended connection, so each is resumed exactly once: by its worker or resumed work, or by shutdown
/// (with a 503) when it still waits after the grace period. libmicrohttpd must not stop with one suspended.
final class SuspendedRequests: Sendable {
    enum Parking {
        case suspended
        /// The outcome came in before the connection could be suspended: answer it now.
        case alreadyFinished
        /// Shutdown already resumed everything.
        case refused
    }

    private let state = Mutex<(parked: [ObjectIdentifier: ParkedRequest], closed: Bool)>(([:], false))

    /// Registers and suspends a request's connection (from its access handler). Under the same lock as
    /// resuming, so a resume can never come before the suspend.
    func park(_ request: ParkedRequest) -> Parking {
        state.withLock { state in
            guard !state.closed else { return .refused }
            if request.outcome.withLock({ $0 != nil }) { return .alreadyFinished }
            state.parked[ObjectIdentifier(request)] = request
            MHD_suspend_connection(request.connection.pointer)
            return .suspended
        }
    }

    /// Stores the outcome and resumes the connection if it is suspended; only the first outcome counts.
    func finish(_ request: ParkedRequest, with outcome: ParkedRequest.Outcome) {
        state.withLock { state in
            let isFirst = request.outcome.withLock { current in
                guard current == nil else { return false }
                current = outcome
                return true
            }
            guard isFirst, state.parked.removeValue(forKey: ObjectIdentifier(request)) != nil else { return }
            MHD_resume_connection(request.connection.pointer)
        }
    }

    /// Resumes every still-suspended connection with `response` and refuses further parking.
    func resumeAll(with response: Response) {
        state.withLock { state in
            state.closed = true
            for request in state.parked.values {
                request.outcome.withLock { $0 = .response(response) }
                MHD_resume_connection(request.connection.pointer)
            }
            state.parked.removeAll()
        }
    }
}
