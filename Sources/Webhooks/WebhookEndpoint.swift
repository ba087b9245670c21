import Foundation

/// The operator's endpoint: where each attempt is posted, signed with the Standard Webhooks headers.
public struct WebhookEndpoint: Sendable {
    public let url: URL
    let secret: WebhookSecret
    let transport: any WebhookTransport

    public init(url: URL, secret: WebhookSecret, transport: any WebhookTransport = URLSessionWebhookTransport()) {
        self.url = url
        self.secret = secret
        self.transport = transport
    }

    /// `webhook-id`, `webhook-timestamp` (`time`, in unix seconds) and `webhook-signature`, then the body.
    public func post(messageID: String, body: [UInt8], at time: Date) -> WebhookResponse {
        let timestamp = Int64(time.timeIntervalSince1970.rounded(.down))
        let headers = [("webhook-id", messageID), ("webhook-timestamp", String(timestamp)),
                       ("webhook-signature", secret.signature(messageID: messageID, timestamp: timestamp, body: body))]
        return transport.post(url, headers: headers, body: body)
    }

    /// The URL as it may be shown: without its query, which could carry a credential.
    public var shownURL: String {
        guard var parts = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "the webhook URL" }
        parts.query = nil
        return parts.string ?? "the webhook URL"
    }
}
