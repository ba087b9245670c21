import Foundation

/// An event waiting in the webhook outbox (docs/webhooks.md): its body as it is sent on every attempt, under one
/// `webhook-id` (`messageID`).
public struct WebhookOutboxEvent: Sendable, Equatable {
    public var id: Int64
    /// The Standard Webhooks `webhook-id`: the same on every attempt, so the receiver can drop a repeat.
    public var messageID: String
    /// `member.created`, `apple.consent_revoked`, … (what the body's `type` says).
    public var eventType: String
    /// The JSON body, made when the event was written: what it says never changes between attempts.
    public var payload: String
    public var createdAt: Date
    /// Attempts that failed so far.
    public var attempts: Int
    public var nextAttemptAt: Date
    /// A failure after this marks the event failed instead of scheduling another attempt.
    public var giveUpAt: Date
    /// Why the last attempt failed (a status or a transport error; never the body).
    public var lastError: String?
    /// Set once it was given up on; `webhooks retry` clears it.
    public var failedAt: Date?

    public init(id: Int64, messageID: String, eventType: String, payload: String, createdAt: Date, attempts: Int,
                nextAttemptAt: Date, giveUpAt: Date, lastError: String?, failedAt: Date?) {
        self.id = id
        self.messageID = messageID
        self.eventType = eventType
        self.payload = payload
        self.createdAt = createdAt
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.giveUpAt = giveUpAt
        self.lastError = lastError
        self.failedAt = failedAt
    }
}

/// What the outbox holds, for `/metrics` and `webhooks list`.
public struct WebhookBacklog: Sendable, Equatable {
    /// Events still to be delivered (not failed).
    public var pending: Int
    /// Events given up on, until `webhooks retry`.
    public var failed: Int
    /// When the longest-waiting pending event was written; nil when none waits.
    public var oldestPendingCreatedAt: Date?

    public init(pending: Int, failed: Int, oldestPendingCreatedAt: Date?) {
        self.pending = pending
        self.failed = failed
        self.oldestPendingCreatedAt = oldestPendingCreatedAt
    }
}

/// The webhook outbox. An event is enqueued inside the transaction of the change it reports, so it exists exactly
/// when that change committed; it leaves the outbox when the operator's endpoint accepted it. Every backend
/// implements these with the same semantics as the rest of `StoreTransaction` (whole unix seconds).
public protocol WebhookOutboxTransaction {
    /// A new event, due at once. `messageID` must be new (it is the event's key).
    func enqueueWebhookEvent(messageID: String, eventType: String, payload: String, now: Date, giveUpAt: Date) throws
    /// Up to `limit` pending events due at `now`, the longest-waiting first, each not due again before
    /// `claimedUntil`: another instance claiming meanwhile never gets them (on PostgreSQL `FOR UPDATE SKIP LOCKED`).
    /// Complete, postpone or fail each claimed event.
    func claimDueWebhookEvents(now: Date, limit: Int, claimedUntil: Date) throws -> [WebhookOutboxEvent]
    /// Delivered: removes it from the outbox.
    func completeWebhookEvent(id: Int64) throws
    /// Counts the failed attempt, keeps `error` and schedules the next one.
    func postponeWebhookEvent(id: Int64, nextAttemptAt: Date, error: String) throws
    /// Counts the failed attempt, keeps `error` and gives up on the event (`webhooks retry` brings it back).
    func failWebhookEvent(id: Int64, now: Date, error: String) throws
    /// Pending and failed events (only failed ones when `failedOnly`), oldest first, at most `limit`.
    func webhookEvents(failedOnly: Bool, limit: Int) throws -> [WebhookOutboxEvent]
    /// Every failed event pending again, due at `now` and kept until `giveUpAt`; every pending one due at `now`.
    /// Returns how many failed events came back.
    @discardableResult func retryWebhookEvents(now: Date, giveUpAt: Date) throws -> Int
    func webhookBacklog() throws -> WebhookBacklog
    /// When the next pending event is due (possibly already); nil when none is pending. One indexed read, for a
    /// worker that looks often.
    func nextWebhookAttemptAt() throws -> Date?
}
