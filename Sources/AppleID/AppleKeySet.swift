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
    /// The key named `kid` from what is held (even past its freshness), never fetching or waiting; throws what
    /// `key(for:)` would when it is not held.
    func heldKey(for kid: String) throws(TokenRejection) -> RSAPublicKey
}

/// A key set's held keys only: what a thread that must not wait verifies with.
struct HeldKeys: AppleKeySet {
    let base: any AppleKeySet

    func key(for kid: String) throws(TokenRejection) -> RSAPublicKey { try base.heldKey(for: kid) }
    func answersWithoutFetching(_ kid: String) -> Bool { true }
    func heldKey(for kid: String) throws(TokenRejection) -> RSAPublicKey { try base.heldKey(for: kid) }
}

/// The keys a thread that must not wait may use now: a key `answersWithoutFetching` vouches for. For any other it
/// notes that a fetch would be needed and refuses, and the caller verifies again where fetching is allowed.
/// One verification's, on one thread.
final class KeysHeldNow: AppleKeySet, @unchecked Sendable {
    let base: any AppleKeySet
    private(set) var wouldFetch = false

    init(base: any AppleKeySet) { self.base = base }

    func key(for kid: String) throws(TokenRejection) -> RSAPublicKey {
        guard base.answersWithoutFetching(kid) else {
            wouldFetch = true
            throw .keysUnavailable
        }
        return try base.heldKey(for: kid)
    }

    func answersWithoutFetching(_ kid: String) -> Bool { true }
    func heldKey(for kid: String) throws(TokenRejection) -> RSAPublicKey { try base.heldKey(for: kid) }
}
