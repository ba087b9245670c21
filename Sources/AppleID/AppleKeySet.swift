import JOSE

/// Where the RS256 keys that verify Apple's signatures come from: Apple's published key set (`JWKSCache`),
/// or a fixed set (`StaticKeySet`) for tests and offline checks.
public protocol AppleKeySet: Sendable {
    /// The key named `kid`. Throws `.unknownKeyID` when the set does not hold it, and `.keysUnavailable` when
    /// it cannot tell (no keys could be fetched).
    func key(for kid: String) throws(TokenRejection) -> RSAPublicKey
    /// Whether `key(for:)` would answer for `kid` at once, from what is held, without fetching or waiting for a
    /// fetch under way. A request thread that must not wait asks this first.
    func answersWithoutFetching(_ kid: String) -> Bool
}
