import CMicroHTTPD
import Dispatch
import Locking

/// Errors a responder throws to direct the listener rather than to answer: they must pass every error mapping
/// in the responder chain unchanged.
public protocol ListenerDirective: Error {}

extension OffListenerRequired: ListenerDirective {}

/// Thrown by a responder on a listener thread after it handed `RequestResumption.resume(with:)` to work that
/// finishes elsewhere (a group commit): the listener suspends the connection and serves its other connections
/// meanwhile. See `Request.suspension()`.
public struct RequestSuspended: ListenerDirective, CustomStringConvertible {
    let parked: ParkedRequest
    public var description: String { "the request waits, suspended, for work finishing elsewhere" }
}

/// The way back to a suspended request: call `resume(with:)` once, from any thread, with the rest of the
/// request's work. The responder chain then runs again for the same request on a listener thread, and the
/// `Router` runs that work in place of the route's handler, inside the route's group middleware: the handler and
/// whatever it did first (authentication, a rate limit, parsing) do not run again, and the work's errors are
/// answered the way the group answers them.
public struct RequestResumption: Sendable {
    let parked: ParkedRequest
    let suspended: SuspendedRequests

    /// Wakes the request. Cheap and safe to call on the thread that finished the work (e.g. the database
    /// writer): it stores `work` and signals the listener; `work` itself runs on the listener.
    public func resume(with work: @escaping @Sendable () throws -> Response) {
        suspended.finish(parked, with: .work(work))
    }

    /// The error to throw once `resume(with:)` is in the hands of the work (it may have been called already).
    public var suspend: RequestSuspended { RequestSuspended(parked: parked) }
}

/// The rest of a suspended request's work, taken once by the router (`Request.takeResumedWork()`).
final class ResumedWork: Sendable {
    private let work: Lock<(@Sendable () throws -> Response)?>
    init(_ work: @escaping @Sendable () throws -> Response) { self.work = Lock(work) }
    func take() -> (@Sendable () throws -> Response)? { work.withLock { $0.take() } }
    var wasTaken: Bool { work.withLock { $0 == nil } }
}

/// The connection a request arrived on, while its access handler runs on a listener thread.
struct ListenerSlot: @unchecked Sendable {
    let connection: OpaquePointer
    unowned(unsafe) let context: ServerContext
}

extension Request {
    /// On a listener thread, the means to give the thread back while work elsewhere finishes; nil where
    /// waiting is fine (an off-listener worker, a request made in code), so callers then simply wait.
    ///
    ///     if let resumption = request.suspension() {
    ///         startWork { outcome in resumption.resume { try answer(outcome) } }
    ///         throw resumption.suspend
    ///     }
    ///
    /// (`answer(afterStarting:then:)` does just that). The router runs the rest when the request resumes.
    public func suspension() -> RequestResumption? {
        guard let slot = listenerSlot, !isOffListener else { return nil }
        return RequestResumption(parked: ParkedRequest(connection: slot.connection, request: self),
                                 suspended: slot.context.suspended)
    }

    /// When the chain runs again after a suspension, the rest of the work that the suspending handler handed
    /// over; nil otherwise, and once taken. Only the router takes it (see `Router.respond(to:)`).
    func takeResumedWork() -> (@Sendable () throws -> Response)? { resumedWork?.take() }

    /// Answers with `finish(outcome)` once the work `start` begins has its outcome: on a listener thread by
    /// suspending the request meanwhile (the router runs `finish` when it resumes), elsewhere by waiting for it. `start` gets the callback to call once, from any thread, with the outcome.
    public func answer<T: Sendable>(afterStarting start: (@escaping @Sendable (Result<T, any Error>) -> Void) throws -> Void,
                                    then finish: @escaping @Sendable (Result<T, any Error>) throws -> Response) throws -> Response {
        if let resumption = suspension() {
            try start { outcome in resumption.resume { try finish(outcome) } }
            throw resumption.suspend
        }
        let slot = OutcomeSlot<T>()
        try start { slot.fill($0) }
        return try finish(slot.wait())
    }

}

/// One outcome handed over from another thread to a caller that waits for it.
private final class OutcomeSlot<T: Sendable>: Sendable {
    private let outcome = Lock<Result<T, any Error>?>(nil)
    private let filled = DispatchSemaphore(value: 0)

    func fill(_ value: Result<T, any Error>) {
        outcome.withLock { $0 = value }
        filled.signal()
    }

    func wait() -> Result<T, any Error> {
        filled.wait()
        return outcome.withLock { $0! }
    }
}
