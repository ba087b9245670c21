import AppleID
import BridgeMetrics
import BridgeSettings
import Foundation
import Logging
import Storage
import Webhooks

/// Everything the one sign-in transaction needs to know about a verified identity.
package struct SignInRequest: Sendable {
    package var identity: AppleIdentity
    /// The identity token as received, remembered (by digest) so it signs in only once.
    package var identityToken: String
    package var flow: SignInFlow
    package var proof: SignInProof
    package var codeExchange: CodeExchange
    /// Unsigned, from the client; already cleaned.
    package var displayName: String?
    package var grant: SessionGrant
    /// A write that belongs to this sign-in and commits or fails with it, given the signed-in user (an OpenID
    /// client's code): an account deleted meanwhile then takes it along instead of failing it.
    package var alongside: (@Sendable (_ transaction: any StoreTransaction, _ user: User) throws -> Void)? = nil

    package init(identity: AppleIdentity, identityToken: String, flow: SignInFlow, proof: SignInProof,
                 codeExchange: CodeExchange, displayName: String? = nil, grant: SessionGrant,
                 alongside: (@Sendable (_ transaction: any StoreTransaction, _ user: User) throws -> Void)? = nil) {
        self.identity = identity
        self.identityToken = identityToken
        self.flow = flow
        self.proof = proof
        self.codeExchange = codeExchange
        self.displayName = displayName
        self.grant = grant
        self.alongside = alongside
    }
}

/// What ties the identity token to a sign-in this server started, spent inside the transaction.
package enum SignInProof: Sendable {
    /// The web callback's login attempt, by the digest of its state; the token's nonce was checked against it.
    case loginAttempt(stateDigest: String)
    /// The nonce an app sent, if any: one this server issued is spent; the app's own was only matched by the verifier.
    case apiNonce(String?)
}

/// What a successful sign-in opens.
package enum SessionGrant: Sendable {
    /// A session named by a cookie.
    case browserSession
    /// A longer session for an app, with a rotating refresh token.
    case appSession
}

/// A finished sign-in: the secrets to hand to the client, shown once and stored only as digests.
package struct SignedIn: Sendable {
    package var user: User
    package var isNewUser: Bool
    package var sessionID: String
    package var sessionIDHash: String
    package var refreshToken: String?
    package var nonceVerified: Bool

    package init(user: User, isNewUser: Bool, sessionID: String, sessionIDHash: String, refreshToken: String? = nil,
                 nonceVerified: Bool) {
        self.user = user
        self.isNewUser = isNewUser
        self.sessionID = sessionID
        self.sessionIDHash = sessionIDHash
        self.refreshToken = refreshToken
        self.nonceVerified = nonceVerified
    }
}

/// What the sign-in transaction wrote; the `SignedIn` once the write returned (`SignInService.completeSignIn`).
package struct SignInWritten: Sendable {
    package let outcome: SignInOutcome
    package let opened: SessionIssuer.OpenedSession

    package init(outcome: SignInOutcome, opened: SessionIssuer.OpenedSession) {
        self.outcome = outcome
        self.opened = opened
    }

    package func signedIn() throws -> SignedIn {
        SignedIn(user: outcome.user, isNewUser: outcome.created, sessionID: opened.sessionID,
                 sessionIDHash: opened.sessionIDHash, refreshToken: opened.refresh?.token, nonceVerified: outcome.nonceVerified)
    }
}

/// The one sign-in transaction, whichever route a verified identity came through: refuse a failed required code
/// exchange, spend the proof (login attempt or nonce), remember the token against replay, create or update the
/// user, keep Apple's refresh token, and open the session. Knows nothing of HTTP; a refusal is a `SignInFailure`,
/// anything else thrown is a store failure.
package struct SignInService: Sendable {
    /// Marks nonces this server issued, so one that was already cleaned up is still known as ours (expired).
    package static let serverNoncePrefix = "asb."

    package let signIns: any SignInStore
    package let clock: WallClock
    package let vault: AppleTokenVault
    package let exchanger: CodeExchanger
    package let sessionIssuer: SessionIssuer
    package let servicesID: String?
    /// How long after its expiry the verifier still accepts a token (clock-skew leeway): it is remembered that long.
    package let replayLeeway: TimeInterval
    package let metrics: Metrics
    package let logger: Logger
    /// APPLE_TEAM_ID: a token's `transfer_sub` is honoured only for a transfer exported for this team (nil: never).
    package var transferTeam: String? = nil
    /// BRIDGE_WEBHOOK_*: the sign-in's `member.created` / `member.signed_in` event; nil writes none.
    package var webhooks: WebhookEvents? = nil

    package init(signIns: any SignInStore, clock: WallClock, vault: AppleTokenVault, exchanger: CodeExchanger,
                 sessionIssuer: SessionIssuer, servicesID: String?, replayLeeway: TimeInterval, metrics: Metrics,
                 logger: Logger, transferTeam: String? = nil, webhooks: WebhookEvents? = nil) {
        self.webhooks = webhooks
        self.signIns = signIns
        self.clock = clock
        self.vault = vault
        self.exchanger = exchanger
        self.sessionIssuer = sessionIssuer
        self.servicesID = servicesID
        self.replayLeeway = replayLeeway
        self.metrics = metrics
        self.logger = logger
        self.transferTeam = transferTeam
    }

    package func signIn(_ request: SignInRequest) throws -> SignedIn {
        try checkCodeExchange(request)
        let now = clock.now
        let made = try madeBeforehand(request)
        let (write, opened) = signInWrite(request, made, now: now)
        return try completeSignIn(request, Result { SignInWritten(outcome: try signIns.signIn(write), opened: opened) })
    }

    /// The sign-in without a waiting thread: `completion` gets the transaction's outcome, on whichever thread
    /// finished it (the store's writer), and must hand it to `completeSignIn` on a thread of its own. Throws
    /// before starting when a required code exchange failed.
    package func startSignIn(_ request: SignInRequest, completion: @escaping @Sendable (Result<SignInWritten, any Error>) -> Void) throws {
        try checkCodeExchange(request)
        let now = clock.now
        let made = try madeBeforehand(request)
        let (write, opened) = signInWrite(request, made, now: now)
        signIns.signIn(write) { completion($0.map { SignInWritten(outcome: $0, opened: opened) }) }
    }

    /// As the transaction's failure would, a failure here gives back what the code exchange obtained.
    private func madeBeforehand(_ request: SignInRequest) throws -> MadeBeforehand {
        do {
            return try MadeBeforehand(request, vault: vault)
        } catch {
            exchanger.discard(request.codeExchange, clientID: request.identity.audience)
            throw error
        }
    }

    /// What the transaction stores that does not depend on the database (digests, new secrets, the sealed Apple
    /// token), made on the caller's thread before the write is queued: the one writer thread then spends its
    /// time on the writes (the token's digest alone is a SHA-256 over about a kilobyte).
    private struct MadeBeforehand: Sendable {
        let tokenDigest: String
        /// The session's secrets; an app session's with its refresh token.
        let session: SessionIssuer.NewSession
        let sealedAppleRefreshToken: [UInt8]?

        init(_ request: SignInRequest, vault: AppleTokenVault) throws {
            tokenDigest = request.identity.tokenDigest ?? SecretTokens.digest(request.identityToken)
            session = SessionIssuer.newSession(withRefreshToken: request.grant == .appSession)
            sealedAppleRefreshToken = try request.codeExchange.appleRefreshToken
                .map { try vault.seal($0, clientID: request.identity.audience) }
        }
    }

    /// What follows the transaction: a failed one revokes a grant its code exchange obtained; a committed one
    /// queues a postponed exchange, and is counted and logged.
    package func completeSignIn(_ request: SignInRequest, _ outcome: Result<SignInWritten, any Error>) throws -> SignedIn {
        let signedIn: SignedIn
        do {
            signedIn = try outcome.get().signedIn()
        } catch {
            exchanger.discard(request.codeExchange, clientID: request.identity.audience)
            throw error
        }
        exchanger.retryLater(request.codeExchange, userID: signedIn.user.id)
        metrics.increment("bridge_sign_ins_total", ["flow": request.flow.rawValue])
        logger.info("signed_in", ["user_id": String(signedIn.user.id), "flow": request.flow.rawValue,
                                  "new_user": String(signedIn.isNewUser), "nonce_verified": String(signedIn.nonceVerified)])
        return signedIn
    }

    private func checkCodeExchange(_ request: SignInRequest) throws {
        if let refusal = exchanger.refusal(request.codeExchange) { throw SignInFailure.codeExchange(refusal) }
    }

    /// A token for the web Services ID was minted for a web sign-in; elsewhere it must carry a nonce this server
    /// issued, or a web token intercepted before its callback could be spent there.
    package func needsServerNonce(_ identity: AppleIdentity) -> Bool { identity.audience == servicesID }

    package static func isServerNonce(_ nonce: String?) -> Bool { nonce?.hasPrefix(serverNoncePrefix) ?? false }

    /// The transaction as one value: the proof spent, the token remembered against replay, the member found or
    /// created, Apple's refresh token kept, the session opened, and what belongs alongside.
    private func signInWrite(_ request: SignInRequest, _ made: MadeBeforehand, now: Date)
        -> (write: SignInWrite, opened: SessionIssuer.OpenedSession) {
        let identity = request.identity
        let profile = AppleUserProfile(sub: identity.subject, email: identity.email, emailVerified: identity.emailVerified,
                                       isPrivateEmail: identity.isPrivateEmail, displayName: request.displayName,
                                       transferSub: identity.transferSubject, transferTeam: transferTeam)
        var unverifiedNonce: (any Error)? = nil
        if case .apiNonce = request.proof, needsServerNonce(identity) { unverifiedNonce = Refusal.nonceRequired }
        let (session, opened) = sessionIssuer.session(made.session, flow: request.flow.rawValue, now: now)
        let write = SignInWrite(
            now: now, proof: proof(request.proof, identity: identity, now: now), unverifiedNonce: unverifiedNonce,
            identityToken: .init(digest: made.tokenDigest, expiresAt: identity.expiresAt,
                                 acceptedUntil: identity.expiresAt.addingTimeInterval(replayLeeway),
                                 replayed: Refusal.tokenReplayed),
            member: profile, session: session,
            appleToken: made.sealedAppleRefreshToken.map { (identity.audience, $0) }, alongside: request.alongside,
            announcement: signInEvent(flow: request.flow, now: now))
        return (write, opened)
    }

    /// The refusals a write is given to throw, each made an `any Error` once: every such value made from an enum case
    /// allocates a box for it, two for every web sign-in.
    private enum Refusal {
        static let nonceRequired: any Error = SignInFailure.nonceRequired
        static let tokenReplayed: any Error = SignInFailure.tokenReplayed
        static let loginAttemptAlreadyUsed: any Error = SignInFailure.loginAttemptAlreadyUsed
    }

    /// With webhooks, the sign-in's `member.created` or `member.signed_in`, written in its transaction; nil without.
    private func signInEvent(flow: SignInFlow, now: Date) -> SignInWrite.Announcement? {
        guard let webhooks else { return nil }
        return { transaction, member, created in
            try webhooks.recordSignIn(memberID: member.id, created: created, flow: flow.rawValue, in: transaction, now: now)
        }
    }

    /// The proof the transaction spends; for an app's nonce, true when it shows the token's nonce is one this server
    /// issued for this sign-in.
    private func proof(_ proof: SignInProof, identity: AppleIdentity, now: Date) -> SignInWrite.Proof {
        switch proof {
        case let .loginAttempt(stateDigest):
            return .loginAttempt(stateDigest: stateDigest, nonceVerified: identity.nonceVerified,
                                 refusal: Refusal.loginAttemptAlreadyUsed)
        case .apiNonce(nil):
            return .spent { _ in false }
        case let .apiNonce(nonce?):
            return .spent { transaction in
                switch try transaction.consumeAPINonce(nonce, now: now) {
                case .consumed: return true
                case .unknown where Self.isServerNonce(nonce): throw SignInFailure.nonceExpired
                case .unknown: return false  // the app's own nonce: the token matched it, but this server never issued it
                case .expired: throw SignInFailure.nonceExpired
                case .alreadyUsed: throw SignInFailure.nonceAlreadyUsed
                }
            }
        }
    }
}
