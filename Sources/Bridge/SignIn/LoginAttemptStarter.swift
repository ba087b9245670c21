import Foundation
import HTTPServer
import JOSE
import Storage

/// The one way a login attempt starts, for `/login` and for an OpenID client's `/oauth/authorize` alike: a fresh
/// nonce and binding secret, the attempt sealed into its `state` (`SealedLoginState`) so that any instance checks
/// the callback without a read, and in one transaction the rate limit's admission, the attempt (by the digest of its
/// state; only digests are stored) and, for a client, its authorization beside it. The listener thread serves other
/// connections while that write waits for its commit.
struct LoginAttemptStarter: Sendable {
    static let lifetime: TimeInterval = 600

    let store: any Store
    let rateLimit: SignInRateLimit
    let recentAttempts: RecentLoginAttempts
    let sealedStates: SealedLoginState

    /// A stored attempt and the secrets the page hands to the browser.
    struct Started: Sendable {
        let state: String
        let nonce: String
        /// The binding cookie's value.
        let binding: String
        let attempt: LoginAttempt
    }

    /// What an OpenID client's attempt stores beside it, given the attempt's state digest and start time.
    typealias ClientAuthorization = @Sendable (_ stateDigest: String, _ now: Date) -> ProviderAuthorization

    /// Starts an attempt (finishing `authorization`'s client request when given), then answers with `respond`.
    /// The rate limit and the attempt share one transaction: an upsert and inserts, so READ COMMITTED.
    func start(_ request: Request, for authorization: ClientAuthorization? = nil,
               then respond: @escaping @Sendable (Started) throws -> Response) throws -> Reply {
        let admission = rateLimit.admission(of: request)
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
        return request.answer(afterWriting: { transaction in
            try admission.admit(in: transaction)
            try transaction.insertLoginAttempt(attempt)
            if let clientAuthorization { try transaction.insertProviderAuthorization(clientAuthorization) }
        }, to: store, isolation: SignInRateLimit.Admission.isolation) { [recentAttempts] in
            recentAttempts.remember(attempt, authorization: clientAuthorization)
            return try respond(started)
        }
    }
}
