import Dispatch
import Locking

/// What a handler (and every responder around it) answers with: a response now, or how the answer follows.
///
/// - `Reply(response)`, or `.failure(error)`: answered now; the error is presented by the middleware around.
/// - `.offListener { … }`: the rest may wait (it calls another server). A listener thread, which serves many
///   connections, hands it to a bounded pool of workers (a full pool answers 503) and serves other connections
///   meanwhile. The rest gets what the handler already parsed and checked; nothing runs twice.
/// - `.after(starting:then:)`: the answer follows once work finishing elsewhere (a write committing on the
///   database writer) calls back; the connection waits suspended and `then` runs where the request is answered.
///
/// Middleware transforms a reply with `map`, `recover`, `then` and `within`: each applies now to an answer that
/// is ready and later to one that follows, so a middleware never knows on which thread, or when, the rest runs.
/// The listener drives a reply to its response; code outside a listener (a request made in code, a test) calls
/// `wait()`, which runs every step on the calling thread.
public struct Reply: Sendable {
    /// The rest of a reply that waits for work elsewhere, as the callback of that work hands it over.
    public typealias Rest = @Sendable () -> Reply

    enum Step: Sendable {
        case answer(Response)
        case failure(any Error)
        /// Runs on a worker thread, where waiting is fine.
        case offListener(@Sendable () -> Reply)
        /// `start` begins the work and calls its callback once, from any thread, with the rest; `then` (the
        /// middleware's transforms so far) runs the rest where the request is answered.
        case awaiting(start: @Sendable (@escaping @Sendable (@escaping Rest) -> Void) -> Void,
                      then: @Sendable (@escaping Rest) -> Reply)
    }

    let step: Step

    init(step: Step) { self.step = step }

    /// Answers now.
    public init(_ response: Response) { step = .answer(response) }

    /// Answers now with the response, or fails now with the error.
    public init(_ outcome: Result<Response, any Error>) {
        switch outcome {
        case let .success(response): step = .answer(response)
        case let .failure(error): step = .failure(error)
        }
    }

    /// Answers now with what `body` replies, or with its error.
    public init(catching body: () throws -> Reply) {
        do { self = try body() } catch { step = .failure(error) }
    }

    /// Answers now with what `body` responds, or with its error.
    public init(catching body: () throws -> Response) {
        do { step = .answer(try body()) } catch { step = .failure(error) }
    }

    /// Answers now.
    public static func answer(_ response: Response) -> Reply { Reply(step: .answer(response)) }

    /// Fails now: the middleware around presents `error` (an `HTTPError` left over is answered with its status).
    public static func failure(_ error: any Error) -> Reply { Reply(step: .failure(error)) }

    /// Continues on a worker thread, where `work` may wait (for another server); what it replies follows.
    public static func offListener(_ work: @escaping @Sendable () throws -> Reply) -> Reply {
        Reply(step: .offListener { Reply(catching: work) })
    }

    /// Answers with `finish(outcome)` once the work `start` begins has its outcome. `start` gets the callback to
    /// call once, from any thread (the database writer's), with the outcome; `finish` then runs where the request
    /// is answered (on a listener thread, which serves other connections meanwhile). An error `start` throws is
    /// the reply's failure, and `finish` does not run.
    public static func after<T: Sendable>(
        starting start: @escaping @Sendable (@escaping @Sendable (Result<T, any Error>) -> Void) throws -> Void,
        then finish: @escaping @Sendable (Result<T, any Error>) throws -> Reply
    ) -> Reply {
        Reply(step: .awaiting(start: { resume in
            do {
                try start { outcome in resume { Reply(catching: { try finish(outcome) }) } }
            } catch {
                resume { .failure(error) }
            }
        }, then: { rest in rest() }))
    }

    /// As `after(starting:then:)`, answering with the response `finish` makes.
    public static func after<T: Sendable>(
        starting start: @escaping @Sendable (@escaping @Sendable (Result<T, any Error>) -> Void) throws -> Void,
        answering finish: @escaping @Sendable (Result<T, any Error>) throws -> Response
    ) -> Reply {
        after(starting: start) { outcome in Reply(try finish(outcome)) }
    }

    // MARK: Transforms, for middleware: each applies now or to the rest, wherever that runs.

    /// The reply with `transform` applied to its response (not to a failure).
    public func map(_ transform: @escaping @Sendable (Response) throws -> Response) -> Reply {
        switch step {
        case let .answer(response): Reply(catching: { try transform(response) })
        case .failure: self
        case let .offListener(work): Reply(step: .offListener { work().map(transform) })
        case let .awaiting(start, then): Reply(step: .awaiting(start: start, then: { rest in then(rest).map(transform) }))
        }
    }

    /// The reply with a failure answered by `transform` (which may throw another error, or the same).
    public func recover(_ transform: @escaping @Sendable (any Error) throws -> Response) -> Reply {
        switch step {
        case .answer: self
        case let .failure(error): Reply(catching: { try transform(error) })
        case let .offListener(work): Reply(step: .offListener { work().recover(transform) })
        case let .awaiting(start, then): Reply(step: .awaiting(start: start, then: { rest in then(rest).recover(transform) }))
        }
    }

    /// The reply that `transform` makes of the outcome, response or failure.
    public func then(_ transform: @escaping @Sendable (Result<Response, any Error>) -> Reply) -> Reply {
        switch step {
        case let .answer(response): transform(.success(response))
        case let .failure(error): transform(.failure(error))
        case let .offListener(work): Reply(step: .offListener { work().then(transform) })
        case let .awaiting(start, then): Reply(step: .awaiting(start: start, then: { rest in then(rest).then(transform) }))
        }
    }

    /// The reply with whatever of it runs later run inside `scope` too (`scope` calls its argument once), as the
    /// part that ran now ran inside it: a task-local value such as the page language holds for the rest as well.
    public func within(_ scope: @escaping @Sendable (() -> Reply) -> Reply) -> Reply {
        switch step {
        case .answer, .failure:
            self
        case let .offListener(work):
            Reply(step: .offListener { scope(work).within(scope) })
        case let .awaiting(start, then):
            Reply(step: .awaiting(start: start, then: { rest in scope { then(rest) }.within(scope) }))
        }
    }

    // MARK: Driving it here

    /// The response, running every step that follows on the calling thread and waiting for work elsewhere: for a
    /// request made in code, a test, or a worker thread. Throws the failure. Never call it on a listener thread.
    public func wait() throws -> Response {
        var reply = self
        while true {
            switch reply.step {
            case let .answer(response):
                return response
            case let .failure(error):
                throw error
            case let .offListener(work):
                reply = work()
            case let .awaiting(start, then):
                let slot = RestSlot()
                start { slot.fill($0) }
                reply = then(slot.wait())
            }
        }
    }
}

/// The rest of a reply handed over from another thread to a caller that waits for it; the first one counts.
private final class RestSlot: Sendable {
    private let rest = Lock<Reply.Rest?>(nil)
    private let filled = DispatchSemaphore(value: 0)

    func fill(_ value: @escaping Reply.Rest) {
        let first = rest.withLock { rest in
            guard rest == nil else { return false }
            rest = value
            return true
        }
        if first { filled.signal() }
    }

    func wait() -> Reply.Rest {
        filled.wait()
        return rest.withLock { $0! }
    }
}
