import Foundation
import OpenIDProvider

extension BridgeConfiguration {
    /// The `client_id` of the JSON API's own access tokens, which no OpenID client may take.
    package static let jsonAPIClientID = "api"

    /// BRIDGE_CLIENTS_FILE: the OpenID provider's clients. Unset means no clients (the provider answers discovery
    /// and refuses every authorization). A file that cannot be read or used stops start-up with one line.
    package static func clients(_ path: String?) throws(ConfigurationError) -> ClientRegistry {
        guard let path else { return ClientRegistry([]) }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError("BRIDGE_CLIENTS_FILE", "cannot read \(path)")
        }
        do {
            return try ClientRegistry.parse(Array(data), reserving: [jsonAPIClientID])
        } catch {
            throw ConfigurationError("BRIDGE_CLIENTS_FILE", error.description)
        }
    }
}
