import Foundation

/// One closure queued for a group commit (`SQLiteGroupCommit`, `PostgresGroupCommit`) and whoever waits for its
/// outcome; `Resource` is what the closure is run on (a connection, a transaction).
final class QueuedWrite<Resource>: @unchecked Sendable {
    /// A write runs inside a batch; an exclusive one gets the connection outside any transaction (SQLite only).
    let isExclusive: Bool
    /// A sign-in whose statements may go out together with other sign-ins' (PostgreSQL, `PostgresCoalescedSignIns`).
    let mayCoalesce: Bool
    /// Kept until the write is answered (it may run again when its batch is replayed), dropped then: a waiting
    /// caller's `withoutActuallyEscaping` checks that nothing kept it.
    private var body: ((Resource) throws -> Void)?
    /// Called once, on the thread that ran the write, with the outcome (nil: success); dropped then.
    private var answered: (((any Error)?) -> Void)?

    init(isExclusive: Bool = false, mayCoalesce: Bool = false, body: @escaping (Resource) throws -> Void,
         answered: @escaping ((any Error)?) -> Void) {
        self.isExclusive = isExclusive
        self.mayCoalesce = mayCoalesce
        self.body = body
        self.answered = answered
    }

    /// Runs the closure; again when its batch is replayed.
    func run(on resource: Resource) throws {
        guard let body else { return }
        try body(resource)
    }

    func answer(failure: (any Error)? = nil) {
        body = nil
        let answered = answered
        self.answered = nil
        answered?(failure)
    }

    /// Hands `body` to `submit` as a queued write and blocks until it is answered; returns what its last run returned.
    static func submitAndWait<T>(isExclusive: Bool = false, mayCoalesce: Bool = false, _ body: (Resource) throws -> T,
                                 submit: (QueuedWrite) throws -> Void) throws -> T {
        try withoutActuallyEscaping(body) { body in
            var result: T?
            let waiter = Waiter()
            // The caller waits for the answer, so `body` and `result` outlive the write's runs.
            try submit(QueuedWrite(isExclusive: isExclusive, mayCoalesce: mayCoalesce, body: { result = try body($0) },
                                   answered: waiter.answer))
            try waiter.wait()
            guard let result else { throw StoreError.database("the write was answered without running") }
            return result
        }
    }

    /// A queued write whose caller does not wait: `completion` gets the value of its last run, or its failure.
    static func answering<T: Sendable>(mayCoalesce: Bool = false, _ body: @escaping @Sendable (Resource) throws -> T,
                                       completion: @escaping @Sendable (Result<T, any Error>) -> Void) -> QueuedWrite {
        let result = ResultSlot<T>()
        return QueuedWrite(mayCoalesce: mayCoalesce, body: { result.value = try body($0) }, answered: { failure in
            if let failure {
                completion(.failure(failure))
            } else if let value = result.value {
                completion(.success(value))
            } else {
                completion(.failure(StoreError.database("the write was answered without running")))
            }
        })
    }

    /// A caller blocked until its write is answered.
    private final class Waiter: @unchecked Sendable {
        private let semaphore = DispatchSemaphore(value: 0)
        /// Set by the answering thread before it signals.
        private var failure: (any Error)?

        func answer(_ failure: (any Error)?) {
            self.failure = failure
            semaphore.signal()
        }

        func wait() throws {
            semaphore.wait()
            if let failure { throw failure }
        }
    }

    /// What a write returned, kept until its batch commits.
    private final class ResultSlot<T>: @unchecked Sendable {
        var value: T?
    }
}
