import AppleID
import BridgeMetrics
import BridgeSettings
import Foundation
import Logging
import Storage
import Webhooks

extension CompositionRoot {
    /// What writes events into the outbox, for each change that causes one; nil without BRIDGE_WEBHOOK_URL.
    package static func webhookEvents(_ configuration: BridgeConfiguration) -> WebhookEvents? {
        configuration.webhooks.map { WebhookEvents(events: $0.events) }
    }

    /// The outbox's delivery worker, counting and logging each attempt (its id and type, never its body); nil without
    /// BRIDGE_WEBHOOK_URL.
    public static func webhookDelivery(_ configuration: BridgeConfiguration, store: any Store, clock: WallClock = .system,
                                       metrics: Metrics = Metrics(), logger: Logger,
                                       transport: any WebhookTransport = URLSessionWebhookTransport()) -> WebhookDelivery? {
        guard let settings = configuration.webhooks else { return nil }
        return WebhookDelivery(store: StoreAccess(store) { $0 }, url: settings.url, secret: settings.secret, transport: transport,
                               now: { clock.now }) { attempt in
            let (id, type, number, response) = (attempt.messageID, attempt.eventType, String(attempt.attempt),
                                                attempt.response.description)
            switch attempt.outcome {
            case .delivered:
                metrics.increment("bridge_webhook_deliveries_total", ["result": "delivered"])
                logger.info("webhook_delivered", ["webhook_id": id, "type": type, "attempt": number, "response": response])
            case .retrying(let delay):
                metrics.increment("bridge_webhook_deliveries_total", ["result": "retrying"])
                logger.warning("webhook_postponed", ["webhook_id": id, "type": type, "attempt": number, "response": response,
                                                     "retry_in_s": String(Int(delay.rounded(.up)))])
            case .failed:
                metrics.increment("bridge_webhook_deliveries_total", ["result": "failed"])
                logger.log(.error, "webhook_failed", ["webhook_id": id, "type": type, "attempt": number, "response": response])
            }
        }
    }
}
