import JOSE

/// Where the RS256 keys that verify Apple's signatures come from: Apple's published key set (`JWKSCache`),
/// or a fixed set (`StaticKeySet`) for tests and offline checks.
public protocol AppleKeySet: Sendable {
    /// The key named `kid`. Throws `.unknownKeyID` when the set does not hold it, and `.keysUnavailable` when
    /// it cannot tell (no keys could be fetched). May fetch, and wait for a fetch: a caller on a thread that must
    /// not wait asks for the key without fetching instead (`AppleKeyFetching.keyWithoutFetching`).
    func key(for kid: String) throws(TokenRejection) -> RSAPublicKey
}

/// A key set that fetches, and can tell beforehand whether `key(for:)` would answer at once, from what it holds,
/// without fetching or waiting for a fetch under way. The verifiers ask it when a caller decides up front where a
/// step runs (`IdentityTokenVerifier.verifyIfKeyHeld`, `verifiesWithoutFetching`); a set that never fetches
/// (`StaticKeySet`) always answers at once.
public protocol AppleKeyFetching: Sendable {
    /// What `key(for:)` answers now, from what the set holds, when it would answer without fetching or waiting for a
    /// fetch under way; nil when it would fetch or wait. The key itself, not a yes: between a yes and a later
    /// `key(for:)` the key's freshness could run out, and that call would then fetch on the thread that must not wait.
    func keyWithoutFetching(_ kid: String) -> Result<RSAPublicKey, TokenRejection>?
}

extension AppleKeyFetching {
    public func answersWithoutFetching(_ kid: String) -> Bool { keyWithoutFetching(kid) != nil }
}
