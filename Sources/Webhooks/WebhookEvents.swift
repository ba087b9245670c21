import Foundation
import JOSE
import JSON
import Storage

/// Writes events into the outbox, inside the transaction of the change they report: an event exists exactly when
/// its change committed. Events BRIDGE_WEBHOOK_EVENTS leaves out are not written at all.
public struct WebhookEvents: Sendable {
    /// How long an event is retried before it is marked failed.
    public static let retention: TimeInterval = 3 * 24 * 3600

    public let events: Set<WebhookEventType>

    public init(events: Set<WebhookEventType>) {
        self.events = events
    }

    /// `member.created` for the sign-in that made the member, else `member.signed_in`.
    public func recordSignIn(memberID: Int64, created: Bool, flow: String, in outbox: any WebhookOutboxTransaction,
                             now: Date) throws {
        try record(created ? .memberCreated : .memberSignedIn, memberID: memberID, ["flow": .string(flow)], in: outbox, now: now)
    }

    /// `member.deleted`. `appleRevocation`: `revoked`, `queued` (the revocation queue retries it) or `none`.
    public func recordDeletion(memberID: Int64, requestedBy: DeletionRequester, appleRevocation: String,
                               in outbox: any WebhookOutboxTransaction, now: Date) throws {
        try record(.memberDeleted, memberID: memberID,
                   ["requestedBy": .string(requestedBy.rawValue), "appleRevocation": .string(appleRevocation)],
                   in: outbox, now: now)
    }

    /// One event about one member; `data` gets its `memberId` (the JSON API's id). `data` must hold no token, code
    /// or secret: it is sent as it is.
    public func record(_ type: WebhookEventType, memberID: Int64, _ data: [String: JSONValue] = [:],
                       in outbox: any WebhookOutboxTransaction, now: Date) throws {
        guard events.contains(type) else { return }
        var data = data
        data["memberId"] = .integer(memberID)
        let message = WebhookMessage(type: type, data: data, at: now)
        try outbox.enqueueWebhookEvent(messageID: message.id, eventType: type.rawValue, payload: message.body, now: now,
                                       giveUpAt: now.addingTimeInterval(Self.retention))
    }
}

/// One event as the receiver gets it: `{"type", "timestamp", "data"}` under a `webhook-id` of its own.
public struct WebhookMessage: Sendable {
    public let id: String
    public let body: String

    public init(type: WebhookEventType, data: [String: JSONValue], at time: Date) {
        id = "msg_" + SecureRandom.base64URLToken(byteCount: 16)
        body = JSONValue.object(["type": .string(type.rawValue), "timestamp": .string(Self.timestamp(time)),
                                 "data": .object(data)]).serialized()
    }

    /// ISO 8601 in UTC to the second, as Standard Webhooks' examples write it.
    public static func timestamp(_ time: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date(timeIntervalSince1970: time.timeIntervalSince1970.rounded(.down)))
    }
}
