import Webhooks

extension BridgeConfiguration {
    /// BRIDGE_WEBHOOK_URL (https, or http to loopback), BRIDGE_WEBHOOK_SECRET (`whsec_` + base64 of 24 bytes or more)
    /// and BRIDGE_WEBHOOK_EVENTS (a comma list); nil when none is set.
    package static func webhooks(_ settings: Settings) throws(ConfigurationError) -> WebhookSettings? {
        do {
            return try WebhookSettings.parse(url: settings.value("BRIDGE_WEBHOOK_URL"), secret: settings.value("BRIDGE_WEBHOOK_SECRET"),
                                             events: settings.value("BRIDGE_WEBHOOK_EVENTS"))
        } catch {
            throw ConfigurationError(error.key, error.message)
        }
    }
}
