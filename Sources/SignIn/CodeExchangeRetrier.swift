import AppleID
import BridgeMetrics
import Foundation
import Logging
import Storage

/// A code exchange that could not be made during its sign-in (Apple slow, failing, or too busy) while
/// APPLE_REQUIRE_CODE_EXCHANGE is off: the sign-in went on, and this retries the exchange in the background
/// until the code expires, storing Apple's refresh token (encrypted) for the user when it succeeds.
/// In memory and bounded: a restart, or more than `capacity` waiting, drops retries (each one logged).
package final class CodeExchangeRetrier: Sendable {
    package struct Pending: Sendable {
        package var code: String
        package var clientID: String
        package var redirectURI: String?
        package var subject: String
        package var userID: Int64
        package var firstTried: Date
        package var attempts = 0
        package var dueAt: Date

        package init(code: String, clientID: String, redirectURI: String? = nil, subject: String, userID: Int64,
                     firstTried: Date, attempts: Int = 0, dueAt: Date) {
            self.code = code
            self.clientID = clientID
            self.redirectURI = redirectURI
            self.subject = subject
            self.userID = userID
            self.firstTried = firstTried
            self.attempts = attempts
            self.dueAt = dueAt
        }
    }

    /// Apple's codes live five minutes; retries stop a little before.
    package static let codeLifetime: TimeInterval = 280
    package static let firstDelay: TimeInterval = 5

    package let capacity: Int
    private let client: AppleTokenClient
    /// What it reads and writes of the store.
    package typealias StoreRole = any AppleServerSideTransaction
    private let store: StoreAccess<StoreRole>
    private let vault: AppleTokenVault
    private let metrics: Metrics
    private let logger: Logger
    private let state = RetryQueue()

    package init(client: AppleTokenClient, store: StoreAccess<StoreRole>, vault: AppleTokenVault, metrics: Metrics, logger: Logger,
                 capacity: Int = 1_000) {
        self.client = client
        self.store = store
        self.vault = vault
        self.metrics = metrics
        self.logger = logger
        self.capacity = capacity
    }

    /// Exchanges waiting for a retry.
    package var waiting: Int { state.locked { $0.queue.count } }

    package func enqueue(_ pending: Pending) {
        let (accepted, startThread) = state.locked { state -> (Bool, Bool) in
            guard state.queue.count < capacity else { return (false, false) }
            state.queue.append(pending)
            defer { state.running = true }
            return (true, !state.running)
        }
        guard accepted else {
            metrics.increment("bridge_code_exchange_retries_total", ["result": "dropped"])
            logger.warning("code_exchange_retry_dropped", ["reason": "the retry queue is full"])
            return
        }
        state.signal()
        if startThread {
            let thread = Thread { [self] in work() }
            thread.name = "code-exchange-retrier"
            thread.start()
        }
    }

    /// Runs due retries until none is left, then the thread ends (the next enqueue starts another).
    private func work() {
        while let next = nextDue() {
            retry(next)
        }
    }

    /// Waits for the earliest retry to fall due and takes it; nil (and marks the thread gone) when none is left.
    private func nextDue() -> Pending? {
        state.waitLoop { state in
            guard let earliest = state.queue.indices.min(by: { state.queue[$0].dueAt < state.queue[$1].dueAt }) else {
                state.running = false
                return .done(nil)
            }
            let due = state.queue[earliest].dueAt
            if due <= Date() { return .done(state.queue.remove(at: earliest)) }
            return .wait(until: due)
        }
    }

    private func retry(_ pending: Pending) {
        var pending = pending
        pending.attempts += 1
        let deadline = Date().addingTimeInterval(AppleServices.requestBudget)
        do {
            let exchange = try client.exchange(code: pending.code, clientID: pending.clientID,
                                               redirectURI: pending.redirectURI, expectedSubject: pending.subject,
                                               deadline: deadline)
            keep(exchange, for: pending)
        } catch {
            let retryable = CodeExchanger.isRetryable(error)
            let next = Date().addingTimeInterval(Self.firstDelay * pow(2, Double(pending.attempts)))
            if retryable && next.timeIntervalSince(pending.firstTried) < Self.codeLifetime {
                pending.dueAt = next
                state.locked { $0.queue.append(pending) }
                return
            }
            metrics.increment("bridge_code_exchange_retries_total", ["result": "given_up"])
            logger.warning("code_exchange_retry_given_up", ["client_id": pending.clientID, "user_id": String(pending.userID),
                                                             "attempts": String(pending.attempts), "reason": error.description])
        }
    }

    /// Stores Apple's refresh token for the user; if that fails (the user is gone), gives the grant back.
    private func keep(_ exchange: TokenExchange, for pending: Pending) {
        metrics.increment("bridge_code_exchange_retries_total", ["result": "ok"])
        guard let refresh = exchange.refreshToken else { return }
        do {
            let sealed = try vault.seal(refresh, clientID: pending.clientID)
            try store.write { transaction in
                try transaction.upsertAppleToken(AppleTokenRecord(userID: pending.userID, clientID: pending.clientID,
                                                                  encryptedRefreshToken: sealed, updatedAt: Date()))
            }
            logger.info("code_exchange_retry_succeeded", ["user_id": String(pending.userID),
                                                          "attempts": String(pending.attempts)])
        } catch {
            logger.warning("code_exchange_retry_not_kept", ["user_id": String(pending.userID)])
            try? client.revoke(token: refresh, clientID: pending.clientID,
                               deadline: Date().addingTimeInterval(AppleServices.requestBudget))
        }
    }
}

/// The retrier's queue under a condition variable.
private final class RetryQueue: @unchecked Sendable {
    struct State {
        var queue: [CodeExchangeRetrier.Pending] = []
        var running = false
    }

    enum Step {
        case done(CodeExchangeRetrier.Pending?)
        case wait(until: Date)
    }

    private let condition = NSCondition()
    private var state = State()

    func locked<T>(_ body: (inout State) -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body(&state)
    }

    func signal() {
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    func waitLoop(_ step: (inout State) -> Step) -> CodeExchangeRetrier.Pending? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            switch step(&state) {
            case let .done(result): return result
            case let .wait(until): _ = condition.wait(until: until)
            }
        }
    }
}
