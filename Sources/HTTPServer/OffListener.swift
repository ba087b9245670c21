import CMicroHTTPD
import Foundation
import Locking
import WorkerThreads

/// A bounded pool of worker threads for requests moved off the listener. A slot is reserved before the
/// connection is suspended, so a full pool is answered at once (503) instead of queueing without bound.
final class OffListenerPool: Sendable {
    private let workers: WorkerPool
    /// Jobs running, queued or reserved, and whether the pool stopped.
    private let slots = Lock<(taken: Int, stopped: Bool)>((0, false))
    let maxWorkers: Int
    let maxQueued: Int

    init(maxWorkers: Int, maxQueued: Int) {
        self.maxWorkers = max(1, maxWorkers)
        self.maxQueued = max(0, maxQueued)
        workers = WorkerPool(maxThreads: self.maxWorkers, name: "off-listener")
    }

    /// Promises room for one job; false when every worker is busy and the queue is full, or the pool stopped.
    func reserve() -> Bool {
        slots.withLock { slots in
            guard !slots.stopped, slots.taken < maxWorkers + maxQueued else { return false }
            slots.taken += 1
            return true
        }
    }

    /// Runs a job in a slot taken with `reserve()`; the slot is free again when the job returns.
    func run(_ job: @escaping @Sendable () -> Void) {
        let queued = workers.run { [self] in
            job()
            cancelReservation()
        }
        if !queued {  // stopped meanwhile: run it here rather than leave its connection suspended
            job()
            cancelReservation()
        }
    }

    /// Jobs running, queued or reserved.
    var occupied: Int { slots.withLock { $0.taken } }

    /// Gives back a slot taken with `reserve()` that will not be used.
    func cancelReservation() {
        slots.withLock { $0.taken -= 1 }
    }

    /// Lets the workers finish queued jobs and exit; no new job is accepted.
    func stop() {
        slots.withLock { $0.stopped = true }
        workers.stop()
    }
}

/// A libmicrohttpd connection pointer handed to another thread; only `MHD_resume_connection` is called on it.
struct ConnectionHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// One suspended request: the connection to resume, and its outcome once known: the answer a worker produced, or
/// the rest of a reply that waited for work elsewhere, to run on the listener with the middleware's transforms.
final class ParkedRequest: Sendable {
    enum Outcome: Sendable {
        case response(Response)
        case rest(Reply.Rest)
    }

    let connection: ConnectionHandle
    /// How the rest is run once it is in (the transforms of the middleware around the handler); nil for a
    /// request a worker answers.
    let then: (@Sendable (@escaping Reply.Rest) -> Reply)?
    /// The outcome, set once (by the worker or the finished work, or by shutdown), and whether the connection is
    /// suspended. Each request has its own lock: one shared by all of them was contended under sign-ins, between
    /// listener threads suspending and the database writer resuming.
    private let state = Lock<(outcome: Outcome?, isSuspended: Bool)>((nil, false))

    init(connection: OpaquePointer, then: (@Sendable (@escaping Reply.Rest) -> Reply)?) {
        self.connection = ConnectionHandle(pointer: connection)
        self.then = then
    }

    var outcome: Outcome? { state.withLock { $0.outcome } }

    /// Suspends the connection unless the outcome is already in; false then.
    fileprivate func suspendUnlessFinished() -> Bool {
        state.withLock { state in
            guard state.outcome == nil else { return false }
            MHD_suspend_connection(connection.pointer)
            state.isSuspended = true
            return true
        }
    }

    /// Stores the first outcome and resumes the connection if it is suspended; false when one was stored before.
    /// The resume is called after the lock is let go: it wakes the connection's listener thread, whose first step
    /// is to read the outcome under this lock, and while libmicrohttpd's resume ran inside it that thread waited
    /// (about 1 % of a sign-in's CPU spun in the lock). Only the caller that stored the outcome resumes, once.
    fileprivate func finish(with outcome: Outcome) -> Bool {
        let (stored, mustResume) = state.withLock { state -> (Bool, Bool) in
            guard state.outcome == nil else { return (false, false) }
            state.outcome = outcome
            let wasSuspended = state.isSuspended
            state.isSuspended = false
            return (true, wasSuspended)
        }
        if mustResume { MHD_resume_connection(connection.pointer) }
        return stored
    }
}

/// Every suspended connection, so each is resumed exactly once: by its worker or finished work, or by shutdown
/// (with a 503) when it still waits after the grace period. libmicrohttpd must not stop with one suspended.
final class SuspendedRequests: Sendable {
    enum Parking {
        case suspended
        /// The outcome came in before the connection could be suspended: answer it now.
        case alreadyFinished
        /// Shutdown already resumed everything.
        case refused
    }

    /// Registrations are spread over shards so that listener threads rarely wait on one another; none holds its
    /// lock while calling libmicrohttpd.
    private final class Shard: Sendable {
        let state = Lock<(parked: [ObjectIdentifier: ParkedRequest], closed: Bool)>(([:], false))
    }

    private let shards = (0..<16).map { _ in Shard() }

    private func shard(of request: ParkedRequest) -> Shard {
        shards[Int(UInt(bitPattern: ObjectIdentifier(request).hashValue) % UInt(shards.count))]
    }

    /// Registers and suspends a request's connection (from its access handler). A resume can never come before
    /// the suspend: both happen under the request's own lock.
    func park(_ request: ParkedRequest) -> Parking {
        let registered = shard(of: request).state.withLock { shard in
            guard !shard.closed else { return false }
            shard.parked[ObjectIdentifier(request)] = request
            return true
        }
        guard registered else { return .refused }
        if request.suspendUnlessFinished() { return .suspended }
        unregister(request)
        return .alreadyFinished
    }

    /// Stores the outcome and resumes the connection if it is suspended; only the first outcome counts.
    func finish(_ request: ParkedRequest, with outcome: ParkedRequest.Outcome) {
        if request.finish(with: outcome) { unregister(request) }
    }

    /// Resumes every still-suspended connection with `response` and refuses further parking.
    func resumeAll(with response: Response) {
        for shard in shards {
            let waiting = shard.state.withLock { shard in
                shard.closed = true
                defer { shard.parked.removeAll() }
                return Array(shard.parked.values)
            }
            for request in waiting { _ = request.finish(with: .response(response)) }
        }
    }

    private func unregister(_ request: ParkedRequest) {
        _ = shard(of: request).state.withLock { $0.parked.removeValue(forKey: ObjectIdentifier(request)) }
    }
}
