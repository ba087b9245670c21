import JOSE
import JSON

/// One RSA signing key and the JWK that publishes its public half.
struct SigningKey: Sendable {
    let keyID: String
    let privateKey: RSAPrivateKey
    let publicJWK: JSONValue

    static func generate() throws -> SigningKey {
        let keyID = "sim-" + SecureRandom.base64URLToken(byteCount: 6)
        let privateKey = try RSAPrivateKey.generate(bits: 2048)
        return SigningKey(keyID: keyID, privateKey: privateKey, publicJWK: privateKey.publicJWK(keyID: keyID))
    }
}

/// The current signing key and the previous keys still published during a rotation, as
/// Apple's JWKS keeps publishing old keys for a while after it starts signing with a new one.
struct SigningKeyRing: Sendable {
    /// Apple publishes a handful of keys; more than this is never useful.
    static let maximumPublished = 3

    private(set) var current: SigningKey
    /// Newest first.
    private(set) var previous: [SigningKey] = []

    init(current: SigningKey) { self.current = current }

    mutating func rotate(to key: SigningKey) {
        previous.insert(current, at: 0)
        previous = Array(previous.prefix(Self.maximumPublished - 1))
        current = key
    }

    mutating func retirePrevious() { previous = [] }

    var jwks: JSONValue {
        .object(["keys": .array(([current] + previous).map(\.publicJWK))])
    }
}
