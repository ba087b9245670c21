import JOSE

/// A fixed set of keys by `kid`, never fetched: for unit tests and anything that verifies without the network.
public struct StaticKeySet: AppleKeySet {
    private let keys: [String: RSAPublicKey]

    public init(_ keys: [String: RSAPublicKey]) { self.keys = keys }

    public func key(for kid: String) throws(TokenRejection) -> RSAPublicKey {
        guard let key = keys[kid] else { throw .unknownKeyID(kid.loggable) }
        return key
    }
}
