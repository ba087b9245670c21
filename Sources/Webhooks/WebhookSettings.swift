import Foundation

/// BRIDGE_WEBHOOK_URL, BRIDGE_WEBHOOK_SECRET and BRIDGE_WEBHOOK_EVENTS, checked.
public struct WebhookSettings: Sendable {
    /// Where every event is posted: https, or http to a loopback address.
    public var url: URL
    public var secret: WebhookSecret
    /// The events sent; every event when BRIDGE_WEBHOOK_EVENTS is unset.
    public var events: Set<WebhookEventType>

    /// A setting that is missing or malformed: `key` names it.
    public struct Problem: Error, Sendable {
        public let key: String
        public let message: String
    }

    /// Nil when no webhook is configured (none of the three keys set).
    public static func parse(url urlText: String?, secret secretText: String?, events eventsText: String?) throws(Problem) -> WebhookSettings? {
        guard urlText != nil || secretText != nil || eventsText != nil else { return nil }
        guard let urlText else {
            throw Problem(key: "BRIDGE_WEBHOOK_URL", message: "is missing: BRIDGE_WEBHOOK_SECRET or BRIDGE_WEBHOOK_EVENTS is set, so webhooks need an endpoint (https://…)")
        }
        guard let url = URL(string: urlText), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty,
              url.user == nil, url.password == nil, url.fragment == nil else {
            throw Problem(key: "BRIDGE_WEBHOOK_URL", message: "must be an absolute https URL such as https://backend.example.com/webhooks/apple-signin (got \"\(urlText)\")")
        }
        guard scheme == "https" || (scheme == "http" && isLoopback(host)) else {
            throw Problem(key: "BRIDGE_WEBHOOK_URL", message: "must use https, or http to a loopback address such as http://127.0.0.1:9000/hook (got \"\(urlText)\")")
        }
        guard let secretText else {
            throw Problem(key: "BRIDGE_WEBHOOK_SECRET", message: "is missing: set it to whsec_ followed by base64 of at least \(WebhookSecret.minimumKeyBytes) random bytes (try: echo whsec_$(openssl rand -base64 32))")
        }
        guard let secret = WebhookSecret(secretText) else {
            // The value is a secret: never echoed.
            throw Problem(key: "BRIDGE_WEBHOOK_SECRET", message: "must be whsec_ followed by base64 of at least \(WebhookSecret.minimumKeyBytes) random bytes (try: echo whsec_$(openssl rand -base64 32))")
        }
        var events = Set(WebhookEventType.filterable)
        if let eventsText {
            let names = eventsText.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            var chosen = Set<WebhookEventType>()
            for name in names {
                guard let type = WebhookEventType.filterable.first(where: { Array($0.rawValue.utf8) == Array(name.utf8) }) else {
                    throw Problem(key: "BRIDGE_WEBHOOK_EVENTS", message: "must be a comma list of \(WebhookEventType.filterable.map(\.rawValue).joined(separator: ", ")) (got \"\(name)\")")
                }
                chosen.insert(type)
            }
            guard !chosen.isEmpty else {
                throw Problem(key: "BRIDGE_WEBHOOK_EVENTS", message: "names no event: leave it unset to send every event")
            }
            events = chosen
        }
        return WebhookSettings(url: url, secret: secret, events: events)
    }

    /// `localhost`, 127.0.0.0/8 or ::1.
    static func isLoopback(_ host: String) -> Bool {
        let name = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if name == "localhost" || name == "::1" { return true }
        var address = in_addr()
        guard inet_pton(AF_INET, name, &address) == 1 else { return false }
        return UInt32(bigEndian: address.s_addr) >> 24 == 127
    }
}
