import AppleID
import BridgeSettings
import Foundation
import Storage

/// The authorization codes the Android relay handed to an app, recorded in the database by digest with the relay's
/// URL: Apple issued each for that URL, so the app's sign-in, on whichever instance it lands, exchanges the code with
/// it as the `redirect_uri` (Apple answers `invalid_grant` to any other).
package struct RelayedCodes: Sendable {
    /// Apple's codes live five minutes; the record a little longer, then housekeeping removes it.
    package static let lifetime: TimeInterval = 600

    /// What it reads and writes of the store.
    package typealias StoreRole = any RelayedCodeTransaction
    package let store: StoreAccess<StoreRole>
    package let clock: WallClock

    package init(store: StoreAccess<StoreRole>, clock: WallClock) {
        self.store = store
        self.clock = clock
    }

    /// The write that records `code` as relayed from `redirectURI`.
    package func recording(_ code: String, from redirectURI: String) -> @Sendable (StoreRole) throws -> Void {
        let (codeHash, expiresAt) = (SecretTokens.digest(code), clock.now.addingTimeInterval(Self.lifetime))
        return { try $0.recordRelayedCode(codeHash: codeHash, redirectURI: redirectURI, expiresAt: expiresAt) }
    }

    /// The relay URL `code` was handed over from, or nil for a code the relay did not hand over (or long ago).
    package func redirectURI(forCode code: String) throws -> String? {
        let (codeHash, now) = (SecretTokens.digest(code), clock.now)
        return try store.readOneStatement { try $0.relayedCodeRedirectURI(codeHash: codeHash, now: now) }
    }
}
