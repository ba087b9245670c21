import Foundation

/// Everything the service reads or writes, used inside one unit of work
/// (`Store.read` / `Store.write`). Do not keep a transaction beyond that closure.
///
/// Implementations must keep the same semantics on every backend: times are stored as
/// whole unix seconds, "expired" means `expiresAt <= now`.
public protocol StoreTransaction {
    func insertLoginAttempt(_ attempt: LoginAttempt) throws
    func loginAttempt(state: String) throws -> LoginAttempt?
    /// Atomic: true only for the one caller that marks an unconsumed, unexpired attempt used.
    func consumeLoginAttempt(state: String, now: Date) throws -> Bool

    /// Finds the user by `(provider: "apple", providerUserID: sub)` — never by email —
    /// or creates it. See `User.applyingSignIn` for what a later sign-in updates.
    func upsertAppleUser(_ profile: AppleUserProfile, now: Date) throws -> (user: User, created: Bool)
    func user(id: Int64) throws -> User?
    func countUsers() throws -> Int
    /// Deletes the user and, by cascade, its sessions. False when there was no such user.
    @discardableResult func deleteUser(id: Int64) throws -> Bool

    func insertSession(_ session: Session) throws
    /// Nil when the session is missing or expired.
    func session(idHash: String, now: Date) throws -> (session: Session, user: User)?
    @discardableResult func deleteSession(idHash: String) throws -> Bool

    /// Removes expired login attempts and sessions; returns how many rows went.
    @discardableResult func deleteExpired(now: Date) throws -> Int
}

/// A database. Thread-safe; calls block the calling thread.
public protocol Store: Sendable {
    /// "sqlite" or, later, "postgres".
    var backendName: String { get }
    /// Applies pending numbered migrations, each in its own transaction, and returns the
    /// versions applied by this call (empty when up to date). Throws
    /// `StoreError.schemaTooNew` for a database migrated by a newer build.
    func migrate() throws -> [Int]
    /// A read-only transaction on a consistent snapshot. It does not see writes of a
    /// `write` still running, even on the same thread.
    func read<T>(_ body: (any StoreTransaction) throws -> T) throws -> T
    /// One write transaction: committed when `body` returns, rolled back when it throws
    /// (the error is rethrown unchanged). Writes are serialized; do not nest `write` calls.
    /// Do not swallow a failed statement's error and carry on inside `body`: PostgreSQL
    /// aborts the whole transaction at that point.
    func write<T>(_ body: (any StoreTransaction) throws -> T) throws -> T
}
