import JOSE

/// Where the RS256 keys that verify Apple's signatures come from: Apple's published key set (`JWKSCache`),
/// or a fixed set (`StaticKeySet`) for tests and offline checks.
public protocol AppleKeySet: Sendable {
    /// The key named `kid`. Throws `.unknownKeyID` when the set does not hold it, and `.keysUnavailable` when
    /// it cannot tell (no keys could be fetched). May fetch, and wait for a fetch: a caller on a thread that must
    /// not wait asks first whether it would (`AppleKeyFetching`).
    func key(for kid: String) throws(TokenRejection) -> RSAPublicKey
}

/// A key set that fetches, and can tell beforehand whether `key(for:)` would answer at once, from what it holds,
/// without fetching or waiting for a fetch under way. The verifiers ask it when a caller decides up front where a
/// step runs (`IdentityTokenVerifier.verifyIfKeyHeld`, `verifiesWithoutFetching`); a set that never fetches
/// (`StaticKeySet`) always answers at once.
public protocol AppleKeyFetching: Sendable {
    func answersWithoutFetching(_ kid: String) -> Bool
}
