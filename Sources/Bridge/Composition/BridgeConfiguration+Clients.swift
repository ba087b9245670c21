import Foundation
import OpenIDProvider

extension BridgeConfiguration {
    /// BRIDGE_CLIENTS_FILE: the OpenID provider's clients. Unset means no clients (the provider answers discovery
    /// and refuses every authorization). A file that cannot be read or used stops start-up with one line.
    static func clients(_ path: String?) throws(ConfigurationError) -> ClientRegistry {
        guard let path else { return ClientRegistry([]) }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError("BRIDGE_CLIENTS_FILE", "cannot read \(path)")
        }
        do {
            return try ClientRegistry.parse(Array(data), reserving: [AccessTokens.apiClientID])
        } catch {
            throw ConfigurationError("BRIDGE_CLIENTS_FILE", error.description)
        }
    }
}
