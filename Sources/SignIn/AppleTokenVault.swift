import JOSE

/// Apple refresh tokens at rest: AES-256-GCM with a key derived from BRIDGE_SECRET_KEY, a fresh random nonce
/// per record, and the client ID as associated data (a token cannot be moved to another client's record).
package struct AppleTokenVault: Sendable {
    private let key: [UInt8]

    package init(key: [UInt8]) {
        self.key = key
    }

    package func seal(_ token: String, clientID: String) throws -> [UInt8] {
        try AESGCM.seal(Array(token.utf8), key: key, associatedData: Array("apple-refresh:\(clientID)".utf8))
    }

    package func open(_ sealed: [UInt8], clientID: String) throws -> String {
        String(decoding: try AESGCM.open(sealed, key: key, associatedData: Array("apple-refresh:\(clientID)".utf8)), as: UTF8.self)
    }
}
