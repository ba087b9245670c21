import Bridge
import BridgeSettings
import Foundation
import Logging
import SignIn

/// `apple-signin-bridge keys rotate`: adds a signing key to the shared database. It signs from then on (running
/// instances switch within a minute); the previous keys stay published for a day, longer than their tokens live.
public enum ProviderKeyCommand {
    /// Returns the new key's kid.
    public static func rotate(configuration: BridgeConfiguration, logger: Logger) throws -> String {
        guard let secretKey = configuration.secretKey else { throw ConfigurationError("BRIDGE_SECRET_KEY", "is missing") }
        let secrets = try ServerSecrets(secretKey: secretKey)
        let store = try CompositionRoot.openStore(configuration, logger: logger)
        return try ProviderKeyRing.rotate(store: store, sealingKey: secrets.providerKeySealingKey, now: Date())
    }
}
