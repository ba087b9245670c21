import Foundation
import Locking
import Storage

/// Sends the outbox's events to the operator's endpoint, off every request path: a background thread claims the due
/// events (at most `concurrency` at a time, each claimed so that no other instance sends it meanwhile), posts them
/// side by side with a timeout each, and removes each accepted one; a refused or unanswered one is tried again after
/// `WebhookBackoff`, until `WebhookEvents.retention` has passed, then marked failed. Delivery is at least once:
/// an instance killed between the endpoint's answer and the removal sends the event again, under the same
/// `webhook-id`.
public final class WebhookDelivery: Sendable {
    public struct Settings: Sendable {
        /// Events posted at once by one instance.
        public var concurrency = 4
        /// How long one attempt may take.
        public var timeout: TimeInterval = 10
        /// The longest the worker sleeps before it looks at the outbox again (events written by another instance
        /// are found this late at most; this instance's own are found at the next look too).
        public var pollInterval: TimeInterval = 1
        /// How often the backlog for `/metrics` is counted while nothing is sent.
        public var backlogInterval: TimeInterval = 15
        public var backoff = WebhookBackoff()

        public init() {}

        /// An event stays claimed this long: longer than its attempt can take, so one instance sends it at a time.
        var claimDuration: TimeInterval { timeout * 2 + 20 }
    }

    /// What became of one attempt, for the log and the counters (never the body).
    public struct Attempt: Sendable {
        public enum Outcome: Sendable, Equatable {
            case delivered
            case retrying(after: TimeInterval)
            case failed
        }

        public let messageID: String
        public let eventType: String
        /// Attempts made, this one included.
        public let attempt: Int
        public let response: WebhookResponse
        public let outcome: Outcome
    }

    /// What it reads and writes of the store.

    public typealias StoreRole = any WebhookOutboxTransaction

    private let store: StoreAccess<StoreRole>
    private let endpoint: WebhookEndpoint
    private let settings: Settings
    private let now: @Sendable () -> Date
    private let observer: @Sendable (Attempt) -> Void
    private let state = Lock<State>(State())
    private let wake = NSCondition()

    private struct State {
        var running = false
        var stopped = false
        var backlog: WebhookBacklog?
        var backlogCountedAt = Date.distantPast
    }

    public init(store: StoreAccess<StoreRole>, url: URL, secret: WebhookSecret, transport: any WebhookTransport, settings: Settings = Settings(),
                now: @escaping @Sendable () -> Date = { Date() }, observer: @escaping @Sendable (Attempt) -> Void = { _ in }) {
        self.store = store
        endpoint = WebhookEndpoint(url: url, secret: secret, transport: transport)
        self.settings = settings
        self.now = now
        self.observer = observer
    }

    /// The outbox as last counted (at start, after each pass that sent something, and every `backlogInterval`).
    public var backlog: WebhookBacklog? { state.withLock { $0.backlog } }

    /// Starts the background worker (once).
    public func start() {
        let first = state.withLock { state -> Bool in
            defer { state.running = true }
            return !state.running
        }
        guard first else { return }
        refreshBacklog()
        let thread = Thread { [self] in run() }
        thread.name = "webhook-delivery"
        thread.start()
    }

    /// Stops the worker after the attempts it is making; what it has not sent stays in the outbox.
    public func stop() {
        state.withLock { $0.stopped = true }
        wake.lock()
        wake.broadcast()
        wake.unlock()
    }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    private func run() {
        while !isStopped {
            let handled = deliverDue()
            if handled > 0 { continue }
            wake.lock()
            if !isStopped { _ = wake.wait(until: Date().addingTimeInterval(settings.pollInterval)) }
            wake.unlock()
        }
    }

    /// One pass: claims the due events (at most `concurrency`), posts them side by side and records each outcome.
    /// Returns how many were attempted. The background worker calls it; tests call it directly.
    @discardableResult
    public func deliverDue() -> Int {
        let start = now()
        let nextAttempt = try? store.read { try $0.nextWebhookAttemptAt() }
        guard let due = nextAttempt, due <= start else {
            if start.timeIntervalSince(state.withLock { $0.backlogCountedAt }) >= settings.backlogInterval { refreshBacklog() }
            return 0
        }
        let claimedUntil = start.addingTimeInterval(settings.claimDuration)
        guard let claimed = try? store.write({ try $0.claimDueWebhookEvents(now: start, limit: settings.concurrency,
                                                                             claimedUntil: claimedUntil) }),
              !claimed.isEmpty else { return 0 }
        let responses = Lock<[WebhookResponse?]>(Array(repeating: nil, count: claimed.count))
        DispatchQueue.concurrentPerform(iterations: claimed.count) { index in
            let event = claimed[index]
            let response = send(messageID: event.messageID, body: Array(event.payload.utf8))
            responses.withLock { $0[index] = response }
        }
        let finished = now()
        let attempts = zip(claimed, responses.withLock { $0 }).map { event, response -> (WebhookOutboxEvent, Attempt) in
            let response = response ?? .unreachable("not sent")
            let outcome: Attempt.Outcome
            if response.isAccepted {
                outcome = .delivered
            } else if finished >= event.giveUpAt {
                outcome = .failed
            } else {
                outcome = .retrying(after: settings.backoff.delay(afterFailures: event.attempts + 1))
            }
            return (event, Attempt(messageID: event.messageID, eventType: event.eventType, attempt: event.attempts + 1,
                                   response: response, outcome: outcome))
        }
        let recorded = (try? store.write { outbox -> Bool in
            for (event, attempt) in attempts {
                switch attempt.outcome {
                case .delivered:
                    try outbox.completeWebhookEvent(id: event.id)
                case .retrying(let delay):
                    try outbox.postponeWebhookEvent(id: event.id, nextAttemptAt: finished.addingTimeInterval(delay),
                                                    error: attempt.response.description)
                case .failed:
                    try outbox.failWebhookEvent(id: event.id, now: finished, error: attempt.response.description)
                }
            }
            return true
        }) ?? false
        // Not recorded (the database failed): the claims run out and the events are sent again, as delivery is at
        // least once.
        if recorded { attempts.forEach { observer($0.1) } }
        refreshBacklog()
        return claimed.count
    }

    /// Signs and posts one message now (each attempt under a fresh `webhook-timestamp`).
    public func send(messageID: String, body: [UInt8]) -> WebhookResponse {
        endpoint.post(messageID: messageID, body: body, at: now())
    }

    private func refreshBacklog() {
        let counted = now()
        guard let backlog = try? store.read({ try $0.webhookBacklog() }) else { return }
        state.withLock {
            $0.backlog = backlog
            $0.backlogCountedAt = counted
        }
    }
}
