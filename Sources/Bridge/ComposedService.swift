import AppleID
import BridgeMetrics
import BridgeSettings
import SignIn
import Storage
import WebRoutes
import Webhooks

/// The service as `CompositionRoot.compose` put it together: the route table, and what the listener, the sweeper
/// and tests take beside it.
public struct ComposedService: Sendable {
    public let configuration: BridgeConfiguration
    public let store: any Store
    public let apple: AppleServices
    public let metrics: Metrics
    /// Every route, in its group.
    public let routes: BridgeApp
    /// Who a request comes from, believing `X-Forwarded-For` only from BRIDGE_TRUSTED_PROXIES.
    package let clientAddresses: ClientAddresses
    package let accountDeletion: AccountDeletion
    /// The revocation queue as last counted, for `/metrics`.
    package let revocationBacklog: RevocationBacklog
    /// BRIDGE_WEBHOOK_*: the outbox's delivery worker, which `BridgeServer` starts; nil without webhooks.
    package let webhookDelivery: WebhookDelivery?

    public var keys: JWKSCache { apple.keys }

    /// One pass of the queue of Apple revocations that failed before, then a count of what is left for `/metrics`;
    /// the background sweeper calls it, tests call it after moving the clock. Returns how many completed.
    @discardableResult
    public func processDueRevocations(limit: Int = 50) -> Int {
        defer { revocationBacklog.refresh() }
        return accountDeletion.processDueRevocations(limit: limit)
    }
}
