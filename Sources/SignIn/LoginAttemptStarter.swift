import BridgeSettings
import Foundation
import HTTPServer
import JOSE
import Storage

/// The one way a login attempt starts, for `/login` and for an OpenID client's `/oauth/authorize` alike: a fresh
/// nonce and binding secret, the attempt sealed into its `state` (`SealedLoginState`) so that any instance checks
/// the callback without a read, and in one transaction the rate limit's admission, the attempt (by the digest of its
/// state; only digests are stored) and, for a client, its authorization beside it. The listener thread serves other
/// connections while that write waits for its commit.
package struct LoginAttemptStarter: Sendable {
    package static let lifetime: TimeInterval = 600

    package let store: any Store
    package let recentAttempts: RecentLoginAttempts
    package let sealedStates: SealedLoginState

    package init(store: any Store, recentAttempts: RecentLoginAttempts, sealedStates: SealedLoginState) {
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

    /// Starts an attempt (finishing `authorization`'s client request when given), then answers with `respond`.
    /// The rate limit's `admission` and the attempt share one transaction: an upsert and inserts, so READ COMMITTED.
    package func start(_ request: Request, admission: RateLimitAdmission, for authorization: ClientAuthorization? = nil,
                       then respond: @escaping @Sendable (Started) throws -> Response) throws -> Response {
        let now = admission.now
        let (nonce, binding) = (SecretTokens.random(), SecretTokens.random())
        let bindingHash = SecretTokens.digest(binding)
        let expiresAt = now.addingTimeInterval(Self.lifetime)
        let state = try sealedStates.seal(nonce: nonce, bindingHash: bindingHash, createdAt: now, expiresAt: expiresAt,
                                          kind: authorization == nil ? .web : .provider)
        let attempt = LoginAttempt(state: SecretTokens.digest(state), nonce: nonce, bindingHash: bindingHash,
                                   createdAt: now, expiresAt: expiresAt, consumedAt: nil)
        let clientAuthorization = authorization?(attempt.state, now)
        let started = Started(state: state, nonce: nonce, binding: binding, attempt: attempt)
        return try request.answer(afterWriting: { transaction in
            try admission.admit(in: transaction)
            try transaction.insertLoginAttempt(attempt)
            if let clientAuthorization { try transaction.insertProviderAuthorization(clientAuthorization) }
        }, to: store, isolation: RateLimitAdmission.isolation) { [recentAttempts] in
            recentAttempts.remember(attempt, authorization: clientAuthorization)
            return try respond(started)
        }
    }
}
