import AppleID
import Bridge
import BridgeMetrics
import BridgeSettings
import Logging
import SignIn
import Storage

extension MemberRequests {
    /// What `members` needs: the configured store, which must exist already (a mistyped SQLite path would otherwise
    /// be a new, empty database without the member), and account deletion as the server does it, with the key that
    /// opens the stored Apple tokens.
    package static func configured(_ configuration: BridgeConfiguration, transport: any AppleHTTPTransport,
                                   logger: Logger) throws(ConfigurationError) -> MemberRequests {
        guard let secretKey = configuration.secretKey else { throw ConfigurationError("BRIDGE_SECRET_KEY", "is missing") }
        let store = try CompositionRoot.existingStore(configuration, logger: logger)
        let clock = WallClock.system
        let apple = CompositionRoot.appleServices(configuration, clientKey: try CompositionRoot.clientKey(configuration), transport: transport,
                                  clock: clock, logger: logger)
        let vault = AppleTokenVault(key: try ServerSecrets(secretKey: secretKey).appleTokenKey)
        let accountDeletion = AccountDeletion(store: StoreAccess(store) { $0 }, clock: clock, vault: vault, appleTokens: apple.tokenClient,
                                              metrics: Metrics(), logger: logger,
                                              webhooks: CompositionRoot.webhookEvents(configuration))
        return MemberRequests(store: store, accountDeletion: accountDeletion, clock: clock, logger: logger)
    }
}
