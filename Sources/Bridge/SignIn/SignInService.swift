import AppleID
import Foundation
import HTTPServer
import Storage

/// Everything the one sign-in transaction needs to know about a verified identity.
struct SignInRequest: Sendable {
    var identity: AppleIdentity
    /// The identity token as received, remembered (by digest) so it signs in only once.
    var identityToken: String
    var flow: SignInFlow
    var proof: SignInProof
    var codeExchange: CodeExchange
    /// Unsigned, from the client; already cleaned.
    var displayName: String?
    var grant: SessionGrant
    /// A write that belongs to this sign-in and commits or fails with it, given the signed-in user (an OpenID
    /// client's code): an account deleted meanwhile then takes it along instead of failing it.
    var alongside: (@Sendable (_ transaction: any StoreTransaction, _ user: User) throws -> Void)? = nil
}

/// What ties the identity token to a sign-in this server started, spent inside the transaction.
enum SignInProof: Sendable {
    /// The web callback's login attempt, by the digest of its state; the token's nonce was checked against it.
    case loginAttempt(stateDigest: String)
    /// The nonce an app sent, if any: one this server issued is spent; the app's own was only matched by the verifier.
    case apiNonce(String?)
}

/// What a successful sign-in opens.
enum SessionGrant: Sendable {
    /// A session named by a cookie.
    case browserSession
    /// A longer session for an app, with a rotating refresh token.
    case appSession
}

/// A finished sign-in: the secrets to hand to the client, shown once and stored only as digests.
struct SignedIn: Sendable {
    var user: User
    var isNewUser: Bool
    var sessionID: String
    var sessionIDHash: String
    var refreshToken: String?
    var nonceVerified: Bool
}

/// What the sign-in transaction wrote, its member read by the commit at the latest (`PendingMember`); the
/// `SignedIn` once the write returned (`SignInService.completeSignIn`).
struct SignInWritten: Sendable {
    let member: PendingMember
    let opened: SessionIssuer.OpenedSession
    let nonceVerified: Bool

    /// Once the write returned.
    func signedIn() throws -> SignedIn {
        let (user, created) = try member.get()
        return SignedIn(user: user, isNewUser: created, sessionID: opened.sessionID, sessionIDHash: opened.sessionIDHash,
                        refreshToken: opened.refresh?.token, nonceVerified: nonceVerified)
    }
}

/// The one sign-in transaction, whichever route a verified identity came through: refuse a failed required code
/// exchange, spend the proof (login attempt or nonce), remember the token against replay, create or update the
/// user, keep Apple's refresh token, and open the session. Knows nothing of HTTP; a refusal is a `SignInFailure`,
/// anything else thrown is a store failure.
struct SignInService: Sendable {
    /// Every rule of the transaction is one conditional statement on the row it guards: the login attempt or nonce is
    /// spent by an `UPDATE … WHERE consumed_at IS NULL`, the token recorded by an upsert that refuses an unexpired
    /// record, the member found with its row locked or inserted on its unique key, the session inserted. So on
    /// PostgreSQL it runs at READ COMMITTED: at SERIALIZABLE, sign-ins of different people conflicted over shared
    /// index pages and ran again (0.2 retries a sign-in with one instance, 0.4 with two).
    static let isolation = WriteIsolation.readCommittedSignIn

    /// Marks nonces this server issued, so one that was already cleaned up is still known as ours (expired).
    static let serverNoncePrefix = "asb."

    let store: any Store
    let clock: WallClock
    let vault: AppleTokenVault
    let exchanger: CodeExchanger
    let sessionIssuer: SessionIssuer
    let servicesID: String?
    /// How long after its expiry the verifier still accepts a token (clock-skew leeway): it is remembered that long.
    let replayLeeway: TimeInterval
    let metrics: Metrics
    let logger: Logger
    /// APPLE_TEAM_ID: a token's `transfer_sub` is honoured only for a transfer exported for this team (nil: never).
    var transferTeam: String? = nil

    func signIn(_ request: SignInRequest) throws -> SignedIn {
        try checkCodeExchange(request)
        let now = clock.now
        let made = try madeBeforehand(request)
        return try completeSignIn(request, Result {
            try store.write(isolation: Self.isolation) { try signIn(request, made, in: $0, now: now) }
        })
    }

    /// The sign-in without a waiting thread: `completion` gets the transaction's outcome, on whichever thread
    /// finished it (the store's writer), and must hand it to `completeSignIn` on a thread of its own. Throws
    /// before starting when a required code exchange failed.
    func startSignIn(_ request: SignInRequest, completion: @escaping @Sendable (Result<SignInWritten, any Error>) -> Void) throws {
        try checkCodeExchange(request)
        let now = clock.now
        let made = try madeBeforehand(request)
        store.write(isolation: Self.isolation, { [self] in try signIn(request, made, in: $0, now: now) }, completion: completion)
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
    func completeSignIn(_ request: SignInRequest, _ outcome: Result<SignInWritten, any Error>) throws -> SignedIn {
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
    func needsServerNonce(_ identity: AppleIdentity) -> Bool { identity.audience == servicesID }

    static func isServerNonce(_ nonce: String?) -> Bool { nonce?.hasPrefix(serverNoncePrefix) ?? false }

    private func signIn(_ request: SignInRequest, _ made: MadeBeforehand, in transaction: any StoreTransaction,
                        now: Date) throws -> SignInWritten {
        let identity = request.identity
        let nonceVerified = try spend(request.proof, identity: identity, in: transaction, now: now)
        var refusedForNonce = false
        if case .apiNonce = request.proof, needsServerNonce(identity), !nonceVerified { refusedForNonce = true }
        // A replayed token is refused as a replay before its missing nonce: then the record's check cannot wait.
        try recordTokenUse(digest: made.tokenDigest, identity: identity, waiting: refusedForNonce, in: transaction, now: now)
        if refusedForNonce { throw SignInFailure.nonceRequired }
        let profile = AppleUserProfile(sub: identity.subject, email: identity.email, emailVerified: identity.emailVerified,
                                       isPrivateEmail: identity.isPrivateEmail, displayName: request.displayName,
                                       transferSub: identity.transferSubject, transferTeam: transferTeam)
        let member = try transaction.signInAppleUser(profile, now: now)
        if let sealed = made.sealedAppleRefreshToken {
            try transaction.upsertAppleToken(AppleTokenRecord(
                userID: try member.get().user.id, clientID: identity.audience, encryptedRefreshToken: sealed, updatedAt: now))
        }
        let opened = try sessionIssuer.open(made.session, member: member, flow: request.flow.rawValue,
                                            nonceVerified: nonceVerified, in: transaction, now: now)
        if let alongside = request.alongside { try alongside(transaction, try member.get().user) }
        return SignInWritten(member: member, opened: opened, nonceVerified: nonceVerified)
    }

    /// Spends the proof; true when it shows the token's nonce is one this server issued for this sign-in.
    private func spend(_ proof: SignInProof, identity: AppleIdentity, in transaction: any LoginAttemptTransaction,
                       now: Date) throws -> Bool {
        switch proof {
        case let .loginAttempt(stateDigest):
            // Checked with the next statement that reads (on PostgreSQL, one round trip fewer).
            try transaction.consumeLoginAttempt(state: stateDigest, now: now, otherwise: SignInFailure.loginAttemptAlreadyUsed)
            return identity.nonceVerified
        case .apiNonce(nil):
            return false
        case let .apiNonce(nonce?):
            switch try transaction.consumeAPINonce(nonce, now: now) {
            case .consumed: return true
            case .unknown where Self.isServerNonce(nonce): throw SignInFailure.nonceExpired
            case .unknown: return false  // the app's own nonce: the token matched it, but this server never issued it
            case .expired: throw SignInFailure.nonceExpired
            case .alreadyUsed: throw SignInFailure.nonceAlreadyUsed
            }
        }
    }

    /// One identity token, one sign-in: its digest is kept for as long as the verifier would still accept it.
    /// Not `waiting`, a replay may be thrown by the transaction's next statement that reads, or its commit.
    private func recordTokenUse(digest: String, identity: AppleIdentity, waiting: Bool, in transaction: any SignInTransaction,
                                now: Date) throws {
        let acceptedUntil = identity.expiresAt.addingTimeInterval(replayLeeway)
        guard waiting else {
            return try transaction.recordIdentityTokenUse(tokenHash: digest, tokenExpiresAt: identity.expiresAt,
                                                          expiresAt: acceptedUntil, now: now, otherwise: SignInFailure.tokenReplayed)
        }
        guard try transaction.recordIdentityTokenUse(tokenHash: digest, tokenExpiresAt: identity.expiresAt,
                                                     expiresAt: acceptedUntil, now: now) else {
            throw SignInFailure.tokenReplayed
        }
    }
}
