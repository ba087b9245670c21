import Foundation

/// A sign-in's one transaction, said as what it writes: the proof it spends, the identity token it remembers against
/// replay, the member it finds or creates, the session it opens, Apple's token it keeps, and what else commits or fails
/// with it. Handed to `Store.signIn`, which decides how it reaches the database (on PostgreSQL, together with the
/// sign-ins that arrive with it). A refusal is one of the errors given here, thrown by `Store.signIn`.
public final class SignInWrite: Sendable {
    /// What ties the identity token to a sign-in this server started.
    public enum Proof: Sendable {
        /// The web callback's login attempt, by its state's digest: spent, or else `refusal`. `nonceVerified` is
        /// whether the token's nonce was checked against it.
        case loginAttempt(stateDigest: String, nonceVerified: Bool, refusal: any Error)
        /// Another proof (an app's nonce), spent by the closure, which returns whether it verified the token's nonce
        /// or throws a refusal.
        case spent(by: @Sendable (any LoginAttemptTransaction) throws -> Bool)
    }

    /// The identity token, remembered (by digest) until `acceptedUntil`, its own expiry (`exp`) first.
    public struct IdentityTokenUse: Sendable {
        public var digest: String
        public var expiresAt: Date
        public var acceptedUntil: Date
        /// Thrown when the token signed in before.
        public var replayed: any Error

        public init(digest: String, expiresAt: Date, acceptedUntil: Date, replayed: any Error) {
            self.digest = digest
            self.expiresAt = expiresAt
            self.acceptedUntil = acceptedUntil
            self.replayed = replayed
        }
    }

    public let now: Date
    public let proof: Proof
    /// Thrown when the proof did not verify the token's nonce, after the token is remembered (a replayed token is
    /// refused as a replay first); nil: such a sign-in goes on, its session marked unverified.
    public let unverifiedNonce: (any Error)?
    public let identityToken: IdentityTokenUse
    public let member: AppleUserProfile
    public let session: SessionToOpen
    /// Apple's refresh token, sealed, and the client it was issued to.
    public let appleToken: (clientID: String, encryptedRefreshToken: [UInt8])?
    /// A write that belongs to the sign-in and commits or fails with it, given the member (an OpenID client's code).
    public let alongside: (@Sendable (any StoreTransaction, User) throws -> Void)?
    /// What the sign-in tells others (a webhook's event in the outbox), written last in its transaction, given the
    /// member and whether the sign-in created it. It needs the member's row, so on PostgreSQL a batch holding such a
    /// sign-in goes out one statement a write instead of coalesced.
    public typealias Announcement = @Sendable (_ transaction: any StoreTransaction, _ member: User, _ created: Bool) throws -> Void
    public let announcement: Announcement?

    public init(now: Date, proof: Proof, unverifiedNonce: (any Error)? = nil, identityToken: IdentityTokenUse,
                member: AppleUserProfile, session: SessionToOpen,
                appleToken: (clientID: String, encryptedRefreshToken: [UInt8])? = nil,
                alongside: (@Sendable (any StoreTransaction, User) throws -> Void)? = nil,
                announcement: Announcement? = nil) {
        self.now = now
        self.proof = proof
        self.unverifiedNonce = unverifiedNonce
        self.identityToken = identityToken
        self.member = member
        self.session = session
        self.appleToken = appleToken
        self.alongside = alongside
        self.announcement = announcement
    }
}

/// A session to open, its secrets already digested: a browser's, or with the first refresh token of a new family (an
/// app's or an OpenID client's), which expires with it.
public struct SessionToOpen: Sendable {
    public var idHash: String
    public var flow: String
    public var expiresAt: Date
    public var refreshToken: (hash: String, familyID: String)?

    public init(idHash: String, flow: String, expiresAt: Date, refreshToken: (hash: String, familyID: String)?) {
        self.idHash = idHash
        self.flow = flow
        self.expiresAt = expiresAt
        self.refreshToken = refreshToken
    }
}

/// What a committed sign-in wrote.
public struct SignInOutcome: Sendable {
    public let user: User
    /// The sign-in created the member.
    public let created: Bool
    /// The proof verified the token's nonce (as stored with the session).
    public let nonceVerified: Bool
}

extension SessionTransaction {
    /// Stores `session` and its first refresh token, if any. A session without one may name a member a sign-in in the
    /// same transaction is still finding (by reference); one with a refresh token needs the member's id.
    public func open(_ session: SessionToOpen, of member: MemberReference, nonceVerified: Bool, now: Date) throws {
        try insertSession(idHash: session.idHash, of: member, flow: session.flow, nonceVerified: nonceVerified,
                          createdAt: now, expiresAt: session.expiresAt)
        guard let refresh = session.refreshToken else { return }
        guard case let .id(userID) = member else {
            throw StoreError.database("a refresh token for a member whose id is not known yet")
        }
        try insertRefreshToken(RefreshToken(tokenHash: refresh.hash, familyID: refresh.familyID, sessionIDHash: session.idHash,
                                            userID: userID, createdAt: now, expiresAt: session.expiresAt))
    }
}

/// A sign-in's rows written in its transaction (by `SignInTransaction.write`, which `Store.signIn` runs), read once the
/// write returned: nothing in it is for a caller.
public struct WrittenSignIn: Sendable {
    /// Its row learnt by the commit at the latest.
    let member: PendingMember
    let nonceVerified: Bool

    /// Once the write returned.
    func outcome() throws -> SignInOutcome {
        let (user, created) = try member.get()
        return SignInOutcome(user: user, created: created, nonceVerified: nonceVerified)
    }
}

extension SignInWrite {
    /// The transaction's statements, in the order a sign-in writes them (the order `PostgresCoalescedSignIns` sends a
    /// batch's in): the proof, the token, the member, Apple's token, the session, what goes alongside.
    func run<Connection>(in transaction: SQLTransaction<Connection>) throws -> WrittenSignIn {
        let nonceVerified: Bool
        switch proof {
        case let .loginAttempt(stateDigest, verified, refusal):
            // Checked with the next statement that reads (on PostgreSQL, one round trip fewer).
            try transaction.consumeLoginAttempt(state: stateDigest, now: now, otherwise: refusal)
            nonceVerified = verified
        case let .spent(spend):
            nonceVerified = try spend(transaction)
        }
        let token = identityToken
        if !nonceVerified, let unverifiedNonce {
            // A replayed token is refused as a replay before its missing nonce: then the record's check cannot wait.
            guard try transaction.recordIdentityTokenUse(tokenHash: token.digest, tokenExpiresAt: token.expiresAt,
                                                         expiresAt: token.acceptedUntil, now: now) else { throw token.replayed }
            throw unverifiedNonce
        }
        try transaction.recordIdentityTokenUse(tokenHash: token.digest, tokenExpiresAt: token.expiresAt,
                                               expiresAt: token.acceptedUntil, now: now, otherwise: token.replayed)
        let member = try transaction.signInAppleUser(self.member, now: now)
        if let appleToken {
            try transaction.upsertAppleToken(AppleTokenRecord(userID: try member.get().user.id, clientID: appleToken.clientID,
                                                              encryptedRefreshToken: appleToken.encryptedRefreshToken,
                                                              updatedAt: now))
        }
        // A refresh token is stored with its member's id, so then the session names the member by it as well.
        let reference = session.refreshToken == nil ? member.reference : .id(try member.get().user.id)
        try transaction.open(session, of: reference, nonceVerified: nonceVerified, now: now)
        if let alongside { try alongside(transaction, try member.get().user) }
        if let announcement {
            let (user, created) = try member.get()
            try announcement(transaction, user, created)
        }
        return WrittenSignIn(member: member, nonceVerified: nonceVerified)
    }
}
