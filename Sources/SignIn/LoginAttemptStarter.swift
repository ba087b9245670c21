import BridgeSettings
import Foundation
import JOSE
import Storage

/// The one way a login attempt starts, for `/login` and for an OpenID client's `/oauth/authorize` alike: a fresh
/// nonce and binding secret, the attempt sealed into its `state` (`SealedLoginState`) so that any instance checks
/// the callback without a read, and in one transaction the rate limit's admission, the attempt (by the digest of its
/// state; only digests are stored) and, for a client, its authorization beside it. The listener thread serves other
/// connections while that write waits for its commit (`start`, in the web routes).
package struct LoginAttemptStarter: Sendable {
    package static let lifetime: TimeInterval = 600

    /// What it reads and writes of the store.
    package typealias StoreRole = any LoginAttemptTransaction & OpenIDProviderTransaction & RateLimitTransaction
    package let store: StoreAccess<StoreRole>
    package let recentAttempts: RecentLoginAttempts
    package let sealedStates: SealedLoginState

    package init(store: StoreAccess<StoreRole>, recentAttempts: RecentLoginAttempts, sealedStates: SealedLoginState) {
        self.store = store
        self.recentAttempts = recentAttempts
        self.sealedStates = sealedStates
    }

    /// A stored attempt and the secrets the page hands to the browser.
    package struct Started: Sendable {
        package let state: String
        package let nonce: String
        /// The binding cookie's value.
        package let binding: String
        package let attempt: LoginAttempt

        package init(state: String, nonce: String, binding: String, attempt: LoginAttempt) {
            self.state = state
            self.nonce = nonce
            self.binding = binding
            self.attempt = attempt
        }
    }

    /// What an OpenID client's attempt stores beside it, given the attempt's state digest and start time.
    package typealias ClientAuthorization = @Sendable (_ stateDigest: String, _ now: Date) -> ProviderAuthorization

    /// An attempt made and sealed, its transaction yet to run: the rate limit's admission, the attempt and, for a
    /// client, its authorization. An upsert and inserts, so READ COMMITTED (`isolation`).
    package struct Prepared: Sendable {
        package let started: Started
        package let write: @Sendable (StoreRole) throws -> Void
        let clientAuthorization: ProviderAuthorization?
        package var isolation: WriteIsolation { RateLimitAdmission.isolation }
    }

    /// Makes an attempt (finishing `authorization`'s client request when given) for the caller to write.
    package func prepare(admission: RateLimitAdmission, for authorization: ClientAuthorization? = nil) throws -> Prepared {
        let now = admission.now
        let (nonce, binding) = (SecretTokens.random(), SecretTokens.random())
        let bindingHash = SecretTokens.digest(binding)
        let expiresAt = now.addingTimeInterval(Self.lifetime)
        let state = try sealedStates.seal(nonce: nonce, bindingHash: bindingHash, createdAt: now, expiresAt: expiresAt,
                                          kind: authorization == nil ? .web : .provider)
        let attempt = LoginAttempt(state: SecretTokens.digest(state), nonce: nonce, bindingHash: bindingHash,
                                   createdAt: now, expiresAt: expiresAt, consumedAt: nil)
        let clientAuthorization = authorization?(attempt.state, now)
        return Prepared(started: Started(state: state, nonce: nonce, binding: binding, attempt: attempt),
                        write: { transaction in
                            try admission.admit(in: transaction)
                            try transaction.insertLoginAttempt(attempt)
                            if let clientAuthorization { try transaction.insertProviderAuthorization(clientAuthorization) }
                        },
                        clientAuthorization: clientAuthorization)
    }

    /// Once the attempt's write committed: this instance remembers it, so its callback needs no read.
    package func committed(_ prepared: Prepared) {
        recentAttempts.remember(prepared.started.attempt, authorization: prepared.clientAuthorization)
    }
}
