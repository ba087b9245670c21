import Bridge
import BridgeSettings
import Foundation
import Logging
import Storage
import Webhooks

/// `apple-signin-bridge webhooks list [--failed] | retry | test`: the outbox as the operator sees it
/// (docs/webhooks.md). Each prints what it did; the exit status is 0 when it did it.
public enum WebhooksCommand {
    public static let usage = "usage: apple-signin-bridge webhooks list [--failed] | webhooks retry | webhooks test [--config FILE]"

    public struct InputError: Error, CustomStringConvertible {
        public let description: String
    }

    public static func run(_ words: [String], failedOnly: Bool, configuration: BridgeConfiguration, logger: Logger,
                           output: (String) -> Void) throws -> Int32 {
        switch words {
        case ["list"]:
            return try list(failedOnly: failedOnly, store: CompositionRoot.existingStore(configuration, logger: logger), output: output)
        case ["retry"] where !failedOnly:
            return try retry(store: CompositionRoot.existingStore(configuration, logger: logger), output: output)
        case ["test"] where !failedOnly:
            return try test(configuration: configuration, output: output)
        default:
            throw InputError(description: usage)
        }
    }

    /// Every event waiting or failed (only failed ones with `--failed`), oldest first, then the counts.
    package static func list(failedOnly: Bool, store: any Store, output: (String) -> Void) throws -> Int32 {
        let limit = 1000
        let (events, backlog) = try store.read { (try $0.webhookEvents(failedOnly: failedOnly, limit: limit), try $0.webhookBacklog()) }
        for event in events {
            var line = "\(event.messageID) \(event.eventType) created \(timestamp(event.createdAt)) attempts \(event.attempts) "
            line += event.failedAt.map { "failed \(timestamp($0))" } ?? "next \(timestamp(event.nextAttemptAt))"
            if let error = event.lastError { line += " last error: \(error)" }
            output(line)
        }
        let shown = events.count == limit ? " (the oldest \(limit) shown)" : ""
        output("webhooks: \(backlog.pending) pending, \(backlog.failed) failed\(shown)")
        return 0
    }

    /// Failed events back in the queue for another `WebhookEvents.retention`, and every pending one due now.
    package static func retry(store: any Store, output: (String) -> Void) throws -> Int32 {
        let now = Date()
        let revived = try store.write { try $0.retryWebhookEvents(now: now, giveUpAt: now.addingTimeInterval(WebhookEvents.retention)) }
        let backlog = try store.read { try $0.webhookBacklog() }
        output("webhooks retry: \(revived) failed \(revived == 1 ? "event" : "events") queued again; \(backlog.pending) pending, due now "
               + "(a running server sends them within seconds)")
        return 0
    }

    /// A `ping` to BRIDGE_WEBHOOK_URL now, signed like every event, and what the endpoint answered.
    package static func test(configuration: BridgeConfiguration, output: (String) -> Void) throws -> Int32 {
        guard let settings = configuration.webhooks else {
            throw InputError(description: "configuration error: BRIDGE_WEBHOOK_URL is not set, so there is no endpoint to test")
        }
        let endpoint = WebhookEndpoint(url: settings.url, secret: settings.secret)
        let now = Date()
        let message = WebhookMessage(type: .ping, data: [:], at: now)
        let response = endpoint.post(messageID: message.id, body: Array(message.body.utf8), at: now)
        output("webhooks test: sent ping \(message.id) to \(endpoint.shownURL): \(response.description), "
               + (response.isAccepted ? "accepted" : "not accepted"))
        return response.isAccepted ? 0 : 1
    }

    package static func timestamp(_ date: Date) -> String { WebhookMessage.timestamp(date) }
}
