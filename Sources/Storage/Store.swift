import Foundation

/// Everything the service reads or writes, used inside one unit of work
/// (`Store.read` / `Store.write`). Do not keep a transaction beyond that closure.
///
/// Implementations must keep the same semantics on every backend: times are stored as
/// whole unix seconds, "expired" means `expiresAt <= now`.
///
/// It is only the composition of the roles below, each sized to what one kind of caller uses (as ory/fosite sizes
/// storage per handler): a function that needs one role takes that role, not the whole transaction.
public protocol StoreTransaction: LoginAttemptTransaction, SignInTransaction, SessionTransaction, MemberTransaction,
                                  AppleServerSideTransaction, RelayedCodeTransaction, MemberAdministrationTransaction,
                                  RateLimitTransaction, HousekeepingTransaction, OpenIDProviderTransaction,
                                  MemberGroupsTransaction, WebhookOutboxTransaction {}

/// The proofs a sign-in spends: the web callback's login attempts and the native API's nonces.
public protocol LoginAttemptTransaction {
    func insertLoginAttempt(_ attempt: LoginAttempt) throws
    func loginAttempt(state: String) throws -> LoginAttempt?
    /// The login attempt and the OpenID provider authorization it carries, if any, in one statement (what the
    /// callback reads before it verifies the token).
    func loginAttemptWithAuthorization(state: String) throws -> (attempt: LoginAttempt, authorization: ProviderAuthorization?)?
    /// Atomic: true only for the one caller that marks an unconsumed, unexpired attempt used.
    func consumeLoginAttempt(state: String, now: Date) throws -> Bool
    /// `consumeLoginAttempt`, throwing `refusal` where it would return false. The store may throw it as late as
    /// the transaction's next statement that reads, or its commit: the work in between is rolled back with it.
    func consumeLoginAttempt(state: String, now: Date, otherwise refusal: any Error) throws
    func insertAPINonce(_ nonce: APINonce) throws
    /// Atomic like `consumeLoginAttempt`: `.consumed` for exactly one caller.
    func consumeAPINonce(_ nonce: String, now: Date) throws -> APINonceOutcome
}

/// What only a sign-in writes: its identity token remembered against replay, and its member found or created. With the
/// proof it spends, the session it opens and Apple's token it keeps, it is a sign-in's transaction, which a caller hands
/// to the store as one value (`SignInWrite`, `Store.signIn`).
public protocol SignInTransaction {
    /// Finds the user by `(provider: "apple", providerUserID: sub)` — never by email —
    /// or creates it. See `User.applyingSignIn` for what a later sign-in updates. An unknown `sub` whose profile
    /// carries a `transferSub` recorded for a member not moved yet is that member, moved to the new `sub`.
    /// (A sign-in's transaction does this as part of `Store.signIn`.)
    func upsertAppleUser(_ profile: AppleUserProfile, now: Date) throws -> (user: User, created: Bool)
    /// Writes a sign-in's rows in this transaction: what `Store.signIn` runs. A caller hands the `SignInWrite` to
    /// `Store.signIn` instead.
    func write(_ signIn: SignInWrite) throws -> WrittenSignIn
    /// Remembers an accepted identity token (by hash) until `expiresAt`. True the first
    /// time; false while an earlier, unexpired record exists (a replay). An expired
    /// record is replaced. `tokenExpiresAt` is the token's own `exp` claim: the same
    /// for every use of one token.
    func recordIdentityTokenUse(tokenHash: String, tokenExpiresAt: Date, expiresAt: Date, now: Date) throws -> Bool
    /// `recordIdentityTokenUse`, throwing `refusal` where it would return false, as late as
    /// `consumeLoginAttempt(state:now:otherwise:)` may.
    func recordIdentityTokenUse(tokenHash: String, tokenExpiresAt: Date, expiresAt: Date, now: Date,
                                otherwise refusal: any Error) throws
}

/// Sessions and the refresh tokens that keep an app's or a client's session going.
public protocol SessionTransaction {
    /// A new session of the member `member` names, whose id may not be known yet.
    func insertSession(idHash: String, of member: MemberReference, flow: String, nonceVerified: Bool,
                       createdAt: Date, expiresAt: Date) throws
    /// Nil when the session is missing or expired.
    func session(idHash: String, now: Date) throws -> (session: Session, user: User)?
    @discardableResult func deleteSession(idHash: String) throws -> Bool
    /// Every session of the user, whatever its flow, and by cascade their refresh
    /// tokens. Returns how many sessions went.
    @discardableResult func deleteSessions(userID: Int64) throws -> Int
    /// Throws `.conflict` unless the session exists and belongs to `token.userID`.
    func insertRefreshToken(_ token: RefreshToken) throws
    /// Atomic: of concurrent callers presenting the same token, exactly one gets
    /// `.rotated`. A token whose session has expired counts as expired.
    func rotateRefreshToken(tokenHash: String, now: Date) throws -> RefreshRotation
    /// Deletes every token of the family and the session(s) they belong to; returns how
    /// many tokens of the family went. The tokens are kept as tombstones until they expire
    /// (or their user is deleted): presented again, each rotates to `.reused` when the family was
    /// revoked `becauseReused`, else to `.revoked`.
    @discardableResult func revokeRefreshFamily(_ familyID: String, becauseReused: Bool) throws -> Int
}

/// Members (users) by id or Apple `sub`: what a session page, an account deletion or Apple's notifications read and change.
public protocol MemberTransaction {
    func user(id: Int64) throws -> User?
    /// The user Apple's server-to-server notifications name by `sub`;
    /// `user(providerUserID:)` assumes the Apple provider.
    func user(provider: String, providerUserID: String) throws -> User?
    func countUsers() throws -> Int
    /// Deletes the user and, by cascade, its sessions, refresh tokens and Apple token.
    /// Pending revocations stay. False when there was no such user.
    @discardableResult func deleteUser(id: Int64) throws -> Bool
    /// Apple's `email-disabled` / `email-enabled` events. Does nothing for an unknown
    /// user; `updatedAt` moves only when the flag changes.
    func setEmailForwarding(userID: Int64, isPrivateEmailEnabled: Bool, now: Date) throws
}

/// Apple's server side: the refresh token kept per member, the queue of revocations Apple has yet to take, and the
/// server-to-server notifications already seen.
public protocol AppleServerSideTransaction {
    /// One per user, replaced on every code exchange.
    func upsertAppleToken(_ record: AppleTokenRecord) throws
    func appleToken(userID: Int64) throws -> AppleTokenRecord?
    @discardableResult func deleteAppleToken(userID: Int64) throws -> Bool
    /// Queues a revocation Apple refused or could not be reached for, due at once.
    /// Returns its id.
    func enqueueRevocation(clientID: String, encryptedToken: [UInt8], tokenTypeHint: String, now: Date) throws -> Int64
    /// At most `limit` revocations due at `now`, the longest-waiting first.
    func dueRevocations(now: Date, limit: Int) throws -> [PendingRevocation]
    /// Apple accepted it: removes it from the queue.
    func completeRevocation(id: Int64) throws
    /// Counts the failed attempt and keeps `error` (which must not contain the token).
    func postponeRevocation(id: Int64, nextAttemptAt: Date, error: String) throws
    func pendingRevocationCount() throws -> Int
    /// When the longest-waiting queued revocation was first queued; nil when the queue is empty.
    func oldestPendingRevocationCreatedAt() throws -> Date?
    /// True the first time a notification `jti` is seen: Apple may deliver an event
    /// more than once.
    func recordNotification(jti: String, now: Date) throws -> Bool
    /// Like `dueRevocations`, but claims them: each returned item is not due again before
    /// `claimedUntil`, so another instance calling this meanwhile never gets it (on
    /// PostgreSQL `FOR UPDATE SKIP LOCKED`). Complete or postpone each claimed item.
    func claimDueRevocations(now: Date, limit: Int, claimedUntil: Date) throws -> [PendingRevocation]
}

/// Codes the Android relay handed over.
public protocol RelayedCodeTransaction {
    /// Remembers that the code of digest `codeHash` was relayed from `redirectURI` (the relay's URL, which Apple issued
    /// it for) until `expiresAt`. A digest already recorded keeps its first record.
    func recordRelayedCode(codeHash: String, redirectURI: String, expiresAt: Date) throws
    /// The redirect URI a code of digest `codeHash` was relayed from, while its record lives; nil for a code the relay
    /// did not hand over.
    func relayedCodeRedirectURI(codeHash: String, now: Date) throws -> String?
}

/// What the operator's commands read and change: a member's records (`members find`, `members export`; see
/// `memberRecords(userID:)`) and moving the app to another Apple developer team (docs/app-transfer.md).
public protocol MemberAdministrationTransaction {
    /// Every member whose email is `email` up to ASCII case, lowest id first. There may be several: Apple's email
    /// claim is not unique over time (an address can move to another Apple ID), and members are keyed by `sub`.
    func users(email: String) throws -> [User]
    /// Every session of the user, expired ones not yet swept included, oldest first.
    func sessions(userID: Int64) throws -> [Session]
    /// Every refresh token of the user's live families, rotated ones included, oldest first.
    func refreshTokens(userID: Int64) throws -> [RefreshToken]
    /// The kept tokens of the user's revoked families, oldest first.
    func revokedRefreshTokens(userID: Int64) throws -> [RevokedRefreshToken]
    /// The OpenID provider's grants to the user's relying parties, oldest first.
    func providerGrants(userID: Int64) throws -> [ProviderGrant]
    /// The OpenID provider's authorization codes issued for the user and not swept yet, oldest first.
    func authorizationCodes(userID: Int64) throws -> [AuthorizationCodeRecord]
    /// Up to `limit` members with an id above `afterUserID` and no transfer identifier recorded for `targetTeam`,
    /// in id order.
    func membersAwaitingTransferExport(targetTeam: String, afterUserID: Int64, limit: Int) throws -> [User]
    /// Records the member's transfer identifier for `targetTeam`, replacing one recorded for another team (and
    /// whatever its import did). An identifier already recorded for another member is refused (a `StoreError`).
    func recordTransferExport(userID: Int64, transferSub: String, targetTeam: String, now: Date) throws
    func memberTransfer(userID: Int64) throws -> MemberTransfer?
    /// Members, and recorded transfers (for `targetTeam`, or all when nil) with how many were imported.
    func transferCounts(targetTeam: String?) throws -> TransferCounts
    /// Up to `limit` recorded transfers not imported yet (failed ones included), user id above `afterUserID`, in order.
    func pendingTransferImports(afterUserID: Int64, limit: Int) throws -> [MemberTransfer]
    /// Moves the member to `migrated.sub` (and its email, when given) if its transfer under `transferSub` still waits
    /// and no other member has that `sub`; then the transfer counts as imported. A taken `sub` is recorded as the
    /// import's failure.
    func completeTransferImport(userID: Int64, transferSub: String, migrated: AppleUserProfile,
                                now: Date) throws -> TransferImportOutcome
    /// Keeps why Apple could not move the member (its error code); the transfer stays pending.
    func recordTransferImportFailure(userID: Int64, failure: String) throws
}

/// Rate limits shared across instances: what several instances on one database must agree on. On SQLite its single
/// writer already serialises them.
public protocol RateLimitTransaction {
    /// One request of `key` against a shared rate limit, in one upsert (GCRA: the bucket is
    /// the time at which it is empty again). Admits at most `burst` requests at once and
    /// one per `interval` after that, however many instances ask. A refused request changes
    /// nothing; it may try again after at most `interval`.
    func admitRateLimited(key: String, now: Date, interval: TimeInterval, burst: Int) throws -> Bool
    /// Removes buckets that are full again (idle clients); returns how many went.
    @discardableResult func deleteIdleRateLimits(now: Date) throws -> Int
}

/// The sweeper's: one instance at a time (a lease), removing what expired.
public protocol HousekeepingTransaction {
    /// Takes or renews the lease `name` for `holder` until `until` when it is free, expired
    /// or already `holder`'s. True when `holder` holds it now. For work one instance at a
    /// time should do (the sweeper).
    func acquireLease(name: String, holder: String, now: Date, until: Date) throws -> Bool
    /// Removes expired login attempts, API nonces, identity token records, refresh
    /// tokens (revoked ones included) and sessions, and notification ids older than 30 days; returns how many
    /// rows went (rows removed by cascade not counted).
    @discardableResult func deleteExpired(now: Date) throws -> Int
}

extension SessionTransaction {
    /// A family revoked because one of its tokens was presented again.
    @discardableResult
    public func revokeRefreshFamily(_ familyID: String) throws -> Int {
        try revokeRefreshFamily(familyID, becauseReused: true)
    }

    public func insertSession(_ session: Session) throws {
        try insertSession(idHash: session.idHash, of: .id(session.userID), flow: session.flow,
                          nonceVerified: session.nonceVerified, createdAt: session.createdAt, expiresAt: session.expiresAt)
    }
}

extension MemberTransaction {
    /// `user(provider: "apple", providerUserID:)`. A protocol requirement cannot carry
    /// a default argument, so this stands in for one.
    public func user(providerUserID: String) throws -> User? {
        try user(provider: User.appleProvider, providerUserID: providerUserID)
    }
}

/// How a write transaction is isolated from concurrent ones on a database that runs them side by side
/// (PostgreSQL). SQLite's one writer runs every write alone whichever is asked.
public enum WriteIsolation: Sendable {
    /// As if the transactions ran one after another (PostgreSQL's SERIALIZABLE): one that loses a race is run again.
    /// For a transaction that reads rows and decides what to write from them.
    case serializable
    /// Each statement sees what was committed before it began (PostgreSQL's READ COMMITTED), and a statement that
    /// changes a row another transaction is changing waits for it, then sees its outcome. For a transaction whose
    /// every rule is one conditional statement on the row it guards (`UPDATE … WHERE consumed_at IS NULL`, an upsert
    /// whose `WHERE` refuses, an `INSERT` on a unique key) or a read that locks the row it then changes: nothing it
    /// decides rests on a row it did not lock, so it needs no retry. SERIALIZABLE would refuse such transactions for
    /// sharing index pages (PostgreSQL's predicate locks are per page), and run them again. Such writes that wait
    /// together share one transaction on PostgreSQL, run in turn (`PostgresGroupCommit`), as every write does on SQLite.
    case readCommitted
}

/// A database. Thread-safe; calls block the calling thread.
public protocol Store: SignInStore {
    /// "sqlite" or, later, "postgres".
    var backendName: String { get }
    /// True when a read waits on another process (a round trip to a database server) and so holds the thread
    /// that makes it; the HTTP server then runs more listener threads per core.
    var readsWaitOnAnotherProcess: Bool { get }
    /// Write transactions run again because they lost a race with another (PostgreSQL's serialization failures
    /// and deadlocks), by cause, since the store opened; empty where writes never race (SQLite's one writer).
    var writeRetries: [(cause: String, count: Int)] { get }
    /// Store calls that failed because a lock stayed held past the session's lock timeout (PostgreSQL's
    /// `lock_timeout`, SQLSTATE 55P03; answered as unavailable), since the store opened; 0 where nothing waits for a row.
    var lockTimeouts: Int { get }
    /// What the store's group commit did since the store opened (see `GroupCommitCounts`).
    var groupCommitCounts: GroupCommitCounts { get }
    /// Applies pending numbered migrations, each in its own transaction, and returns the
    /// versions applied by this call (empty when up to date). Throws
    /// `StoreError.schemaTooNew` for a database migrated by a newer build.
    func migrate() throws -> [Int]
    /// A read-only transaction on a consistent snapshot. It does not see writes of a
    /// `write` still running, even on the same thread.
    func read<T>(_ body: (any StoreTransaction) throws -> T) throws -> T
    /// `read` for a body that runs one statement, which is then its own snapshot: no `BEGIN` and `COMMIT`
    /// around it (on PostgreSQL one round trip instead of three or more, on the thread that waits for them). A body
    /// that runs more than one statement must use `read`: each of its statements could see a different state.
    func readOneStatement<T>(_ body: (any StoreTransaction) throws -> T) throws -> T
    /// One write transaction: committed when `body` returns, rolled back when it throws
    /// (the error is rethrown unchanged). Writes are serialized; do not nest `write` calls.
    /// Do not swallow a failed statement's error and carry on inside `body`: PostgreSQL
    /// aborts the whole transaction at that point. `body` may run more than once before its
    /// transaction commits (PostgreSQL after a serialization failure, SQLite after another write of
    /// its batch failed), and only the last run counts: it must change nothing but the database and
    /// what it returns — count, log and answer in the caller, after `write` returned.
    func write<T>(_ body: (any StoreTransaction) throws -> T) throws -> T
    /// `write` without waiting: `completion` gets the outcome once the transaction committed (or failed), on
    /// whichever thread finished it (the caller's own, for a store that cannot do better than `write`). Keep
    /// `completion` short: on SQLite it runs on the one writer thread; hand the outcome on and return.
    func write<T: Sendable>(_ body: @escaping @Sendable (any StoreTransaction) throws -> T,
                            completion: @escaping @Sendable (Result<T, any Error>) -> Void)
    /// `write` at `isolation` (`write` alone is `.serializable`); a store whose writes never run side by side
    /// ignores it.
    func write<T>(isolation: WriteIsolation, _ body: (any StoreTransaction) throws -> T) throws -> T
    /// The same without waiting, as `write(_:completion:)`.
    func write<T: Sendable>(isolation: WriteIsolation, _ body: @escaping @Sendable (any StoreTransaction) throws -> T,
                            completion: @escaping @Sendable (Result<T, any Error>) -> Void)
}

/// What the sign-in itself asks of a store: its one write (see `Store.signIn`).
public protocol SignInStore: Sendable {
    /// A sign-in's one transaction (see `SignInWrite`): committed, or a refusal the write names, or a store failure.
    /// Every rule of it is one conditional statement on the row it guards (the attempt or nonce spent by an
    /// `UPDATE … WHERE consumed_at IS NULL`, the token recorded by an upsert that refuses an unexpired record, the
    /// member found with its row locked or inserted on its unique key, the session inserted), so on PostgreSQL it runs
    /// at READ COMMITTED with other such writes, and sign-ins that arrive together may go out together: at
    /// SERIALIZABLE, sign-ins of different people conflicted over shared index pages and ran again (0.2 retries a
    /// sign-in with one instance, 0.4 with two).
    func signIn(_ write: SignInWrite) throws -> SignInOutcome
    /// The same without waiting, as `write(_:completion:)`.
    func signIn(_ write: SignInWrite, completion: @escaping @Sendable (Result<SignInOutcome, any Error>) -> Void)
}

/// Writes of several callers that shared one transaction: every write on SQLite (its one writer), the READ COMMITTED
/// writes (sign-ins, login attempts, rate limits) on PostgreSQL.
public struct GroupCommitCounts: Sendable, Equatable {
    /// Write transactions committed.
    public var commits = 0
    /// The writes those transactions carried: `writes / commits` is how many one COMMIT carried on average.
    public var writes = 0
    /// Batches in which a write failed after it had written, so that the batch's other writes ran again (SQLite:
    /// each in a savepoint of a new transaction; PostgreSQL: each alone).
    public var replays = 0
    /// Batches of sign-ins that went out as one statement per kind of write (PostgreSQL, `PostgresCoalescedSignIns`).
    public var coalescedCommits = 0

    public init(commits: Int = 0, writes: Int = 0, replays: Int = 0, coalescedCommits: Int = 0) {
        self.commits = commits
        self.writes = writes
        self.replays = replays
        self.coalescedCommits = coalescedCommits
    }
}

extension Store {
    public var writeRetries: [(cause: String, count: Int)] { [] }
    public var lockTimeouts: Int { 0 }
    public var groupCommitCounts: GroupCommitCounts { GroupCommitCounts() }

    public func readOneStatement<T>(_ body: (any StoreTransaction) throws -> T) throws -> T {
        try read(body)
    }

    public func write<T: Sendable>(_ body: @escaping @Sendable (any StoreTransaction) throws -> T,
                                   completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        completion(Result { try write(body) })
    }

    public func write<T>(isolation: WriteIsolation, _ body: (any StoreTransaction) throws -> T) throws -> T {
        try write(body)
    }

    public func write<T: Sendable>(isolation: WriteIsolation, _ body: @escaping @Sendable (any StoreTransaction) throws -> T,
                                   completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        write(body, completion: completion)
    }
}
