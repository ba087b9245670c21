import Foundation

/// `StoreTransaction` on one connection inside a transaction the store opened, written once for every backend:
/// each statement uses `$1 … $n` placeholders, and a `SQLDialect` fragment only where SQLite and PostgreSQL really
/// differ. Rows become models through one `TableMapping` per table; every write's input passes `StoreInput` first.
/// Times are whole unix seconds, "expired" means `expires_at <= now`.
struct SQLTransaction<Connection: SQLConnection>: StoreTransaction {
    let connection: Connection
    /// Members whose rows a sign-in updated in this transaction, where a sign-in's member may be read by a finisher
    /// after statements of later writes (see `signInAppleUser`); nil where a finisher runs at once (SQLite).
    var updatedMembers: UpdatedMembers? = nil

    var dialect: SQLDialect { connection.dialect }

    @discardableResult
    func run(_ sql: String, _ values: [SQLValue] = []) throws -> Int {
        try connection.run(sql, values)
    }

    func query<T>(_ sql: String, _ values: [SQLValue] = [], _ decode: (any StoredRow) throws -> T) throws -> [T] {
        try connection.query(sql, values, decode)
    }

    /// The rows of one table's mapping: `SELECT <its columns> FROM <its table> <rest>`.
    func select<Model>(_ mapping: TableMapping<Model>, _ rest: String, _ values: [SQLValue]) throws -> [Model] {
        try query(mapping.selectFrom + rest, values) { try mapping.decode($0) }
    }

    // MARK: - Login attempts

    func insertLoginAttempt(_ attempt: LoginAttempt) throws {
        try run("""
            INSERT INTO login_attempts (state, nonce, binding_hash, created_at, expires_at, consumed_at)
            VALUES ($1, $2, $3, $4, $5, $6)
            """,
            [.text(attempt.state), .text(attempt.nonce), .text(attempt.bindingHash),
             .date(attempt.createdAt), .date(attempt.expiresAt), .optionalDate(attempt.consumedAt)])
    }

    func loginAttempt(state: String) throws -> LoginAttempt? {
        try select(.loginAttempts, " WHERE state = $1", [.text(state)]).first
    }

    func loginAttemptWithAuthorization(state: String) throws -> (attempt: LoginAttempt, authorization: ProviderAuthorization?)? {
        try query(SQLStatements.loginAttemptWithAuthorization, [.text(state)]) { row in
            let authorization = try row.text("authorization_state_hash") == nil
                ? nil : TableMapping.providerAuthorizations.decode(row, prefix: "authorization_")
            return (attempt: try TableMapping.loginAttempts.decode(row), authorization: authorization)
        }.first
    }

    func consumeLoginAttempt(state: String, now: Date) throws -> Bool {
        let spend = AttemptSpend(state: state, now: try StoredTime.unixSeconds(now))
        return try run(AttemptSpend.table.single(for: dialect), try AttemptSpend.table.values(spend)) == 1
    }

    func consumeLoginAttempt(state: String, now: Date, otherwise refusal: any Error) throws {
        try connection.send(AttemptSpend(state: state, now: try StoredTime.unixSeconds(now)),
                            requiring: ChangeRequirement(rows: 1, refusal: refusal))
    }

    // MARK: - Users

    func signInAppleUser(_ profile: AppleUserProfile, now: Date) throws -> PendingMember {
        try StoreInput.validate(profile)
        // A returning member is found first: an insert that conflicts has already drawn an id (SQLite's
        // AUTOINCREMENT, PostgreSQL's identity), so inserting first left a gap in the member ids at every sign-in.
        // Its row stays locked until the commit: a sign-in at READ COMMITTED then updates the latest version (another
        // sign-in of the same member waits), and an account deletion waits for the session this opens.
        let new = User.firstSignIn(profile, now: now)
        if profile.transferSub == nil, dialect.insertsInsideWITH {
            // The lookup and the insert in one statement, whose row is needed only by the commit: a sign-in's
            // statements then go out together. The update of a returning member follows once its row is read.
            let member = PendingMember(appleSubject: profile.sub, settle: { [connection] in try connection.settle() })
            try findOrInsert(new) { [self] found in
                guard let (user, created) = found else {
                    let (user, created) = try concurrentlyInserted(profile, now: now)
                    return member.resolve(user, created: created)
                }
                guard !created else { return member.resolve(user, created: true) }
                // Another sign-in of this member earlier in the same transaction (a batch) may have updated the row
                // after this statement read it: the update then starts from the row as it is now.
                let stale = updatedMembers?.ids.contains(user.id) ?? false
                let current = stale ? try lockedUser(appleSubject: profile.sub) ?? user : user
                member.resolve(try updated(current, signingIn: profile, now: now), created: false)
            }
            return member
        }
        let (user, created) = try upsertAppleUserNow(profile, new, now: now)
        return PendingMember(user, created: created)
    }

    func upsertAppleUser(_ profile: AppleUserProfile, now: Date) throws -> (user: User, created: Bool) {
        try signInAppleUser(profile, now: now).get()
    }

    func write(_ signIn: SignInWrite) throws -> WrittenSignIn {
        try signIn.run(in: self)
    }

    /// The member's lookup, transfer or insert, each statement waited for (SQLite, or a profile naming a transfer).
    private func upsertAppleUserNow(_ profile: AppleUserProfile, _ new: User, now: Date) throws -> (user: User, created: Bool) {
        if let existing = try lockedUser(appleSubject: profile.sub) {
            return (try updated(existing, signingIn: profile, now: now), false)
        }
        if let moved = try memberMovedByTransferClaim(profile, now: now) {
            return (try updated(moved, signingIn: profile, now: now), false)
        }
        // A new user is one INSERT, and its row is what was bound plus the id the database gave it: built here rather
        // than read back, which on SQLite materialized the row in a temporary B-tree and decoded it by column name.
        let insertedID = try connection.insertReturningID(SQLStatements.insertUser.text(for: dialect),
            [.text(new.provider), .text(new.providerUserID), .optionalText(new.email), .bool(new.isPrivateEmail),
             .bool(new.emailVerified), .optionalText(new.displayName), .date(new.createdAt),
             .date(new.updatedAt), .bool(new.emailForwardingEnabled)])
        if let insertedID {
            var user = new
            user.id = insertedID
            // As stored: whole seconds.
            user.createdAt = StoredTime.date(fromUnixSeconds: try StoredTime.unixSeconds(new.createdAt))
            user.updatedAt = StoredTime.date(fromUnixSeconds: try StoredTime.unixSeconds(new.updatedAt))
            return (user, true)
        }
        return try concurrentlyInserted(profile, now: now)
    }

    /// After an insert that conflicted: another sign-in of the same new member got there first (PostgreSQL; SQLite's
    /// writer is one). At READ COMMITTED the insert waited for its commit, so this statement sees it.
    private func concurrentlyInserted(_ profile: AppleUserProfile, now: Date) throws -> (user: User, created: Bool) {
        guard let existing = try lockedUser(appleSubject: profile.sub) else {
            throw StoreError.database("user \(profile.sub) neither inserted nor found")
        }
        return (try updated(existing, signingIn: profile, now: now), false)
    }

    /// Gives `finish` the member with `new`'s Apple `sub`, locked as `lockedUser` locks it, or else `new` inserted
    /// (its row as stored, and true); nil when neither, because a concurrent sign-in inserted the member after this
    /// statement's snapshot. Nothing is inserted, and no id drawn, when the member exists.
    private func findOrInsert(_ new: User, finishing finish: @escaping ((user: User, created: Bool)?) throws -> Void) throws {
        try connection.findOrInsert(MemberSignIn(user: new), finishing: finish)
    }

    private func lockedUser(appleSubject: String) throws -> User? {
        try query(SQLStatements.userByProviderIDForUpdate.text(for: dialect), [.text(User.appleProvider), .text(appleSubject)]) {
            try TableMapping.users.decode($0)
        }.first
    }

    private func updated(_ existing: User, signingIn profile: AppleUserProfile, now: Date) throws -> User {
        let updated = existing.applyingSignIn(profile, now: now)
        if updated != existing {
            try update(updated)
            updatedMembers?.ids.insert(updated.id)
        }
        return updated
    }

    func user(id: Int64) throws -> User? {
        try query(SQLStatements.userByID, [.integer(id)]) { try TableMapping.users.decode($0) }.first
    }

    func countUsers() throws -> Int {
        try query("SELECT COUNT(*) AS count FROM users") { Int(try $0.requiredInteger("count")) }.first ?? 0
    }

    func deleteUser(id: Int64) throws -> Bool {
        try run("DELETE FROM users WHERE id = $1", [.integer(id)]) == 1
    }

    func user(provider: String, providerUserID: String) throws -> User? {
        try query(SQLStatements.userByProviderID, [.text(provider), .text(providerUserID)]) {
            try TableMapping.users.decode($0)
        }.first
    }

    func setEmailForwarding(userID: Int64, isPrivateEmailEnabled: Bool, now: Date) throws {
        try run("""
            UPDATE users SET email_forwarding_enabled = $1, updated_at = $2
            WHERE id = $3 AND email_forwarding_enabled <> $1
            """, [.bool(isPrivateEmailEnabled), .date(now), .integer(userID)])
    }

    private func update(_ user: User) throws {
        try connection.send("""
            UPDATE users SET email = $1, is_private_email = $2, email_verified = $3, display_name = $4, updated_at = $5
            WHERE id = $6
            """,
            [.optionalText(user.email), .bool(user.isPrivateEmail), .bool(user.emailVerified),
             .optionalText(user.displayName), .date(user.updatedAt), .integer(user.id)])
    }

    // MARK: - Sessions

    func insertSession(idHash: String, of member: MemberReference, flow: String, nonceVerified: Bool,
                       createdAt: Date, expiresAt: Date) throws {
        let (id, flowValue, verified) = (SQLValue.text(idHash), SQLValue.text(flow), SQLValue.bool(nonceVerified))
        let (created, expires) = (try SQLValue.date(createdAt), try SQLValue.date(expiresAt))
        switch member {
        case let .id(userID):
            try connection.send(SQLStatements.insertSessionOfID, [id, flowValue, verified, created, expires, .integer(userID)])
        case let .appleSubject(subject):
            try connection.send(SessionOpening(idHash: idHash, flow: flow, nonceVerified: nonceVerified,
                                               createdAt: try StoredTime.unixSeconds(createdAt),
                                               expiresAt: try StoredTime.unixSeconds(expiresAt),
                                               provider: User.appleProvider, subject: subject),
                                requiring: ChangeRequirement(
                rows: 1, refusal: StoreError.conflict("a session for a member that does not exist")))
        }
    }

    func session(idHash: String, now: Date) throws -> (session: Session, user: User)? {
        try query(SQLStatements.sessionWithUser, [.text(idHash), .date(now)]) { row -> (session: Session, user: User) in
            (session: try TableMapping.sessions.decode(row, prefix: "session_"),
             user: try TableMapping.users.decode(row, prefix: "user_"))
        }.first
    }

    func deleteSession(idHash: String) throws -> Bool {
        try run("DELETE FROM sessions WHERE id_hash = $1", [.text(idHash)]) == 1
    }

    func deleteSessions(userID: Int64) throws -> Int {
        try run("DELETE FROM sessions WHERE user_id = $1", [.integer(userID)])
    }

    // MARK: - Housekeeping

    func deleteExpired(now: Date) throws -> Int {
        var deleted = 0
        for statement in SQLStatements.deleteExpiredRows {
            deleted += try run(statement, [.date(now)])
        }
        deleted += try run("DELETE FROM apple_notifications WHERE received_at <= $1",
                           [.date(now.addingTimeInterval(-StoreRetention.notificationIDs))])
        return deleted
    }
}

/// The members a transaction's sign-ins updated so far; the transaction's closures run on one thread at a time.
final class UpdatedMembers {
    var ids: Set<Int64> = []
}

/// Statements made once rather than on every call: joins whose column lists come from the mappings, and
/// statements with a dialect fragment. (A generic type cannot hold static stored properties.)
enum SQLStatements {
    static let loginAttemptWithAuthorization = """
        SELECT \(TableMapping.loginAttempts.selectList()),
               \(TableMapping.providerAuthorizations.selectList(prefix: "authorization_"))
        FROM login_attempts LEFT JOIN provider_authorizations ON provider_authorizations.state_hash = login_attempts.state
        WHERE login_attempts.state = $1
        """

    static let insertSessionOfID = """
        INSERT INTO sessions (id_hash, flow, nonce_verified, created_at, expires_at, user_id)
        VALUES ($1, $2, $3, $4, $5, $6)
        """

    /// Every sign-in looks its member up first, and every session page by id: their text is made once.
    static let userByProviderID = TableMapping.users.selectFrom + " WHERE provider = $1 AND provider_user_id = $2"
    static let userByID = TableMapping.users.selectFrom + " WHERE id = $1"
    /// A sign-in's lookup of its member, whose row it may then update.
    static let userByProviderIDForUpdate = DialectStatement { userByProviderID + $0.lockingRowForUpdate }

    static let sessionWithUser = """
        SELECT \(TableMapping.sessions.selectList(prefix: "session_")), \(TableMapping.users.selectList(prefix: "user_"))
        FROM sessions JOIN users ON users.id = sessions.user_id
        WHERE sessions.id_hash = $1 AND sessions.expires_at > $2
        """

    static let insertUser = DialectStatement { dialect in """
        INSERT INTO users (provider, provider_user_id, email, is_private_email, email_verified,
                           display_name, created_at, updated_at, email_forwarding_enabled)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
        ON CONFLICT (provider, provider_user_id) DO NOTHING\(dialect.returningID)
        """
    }

    /// Rows whose `expires_at` has passed, table by table. A used identity token's record is keyed by the token's
    /// own `exp` first: its refusal lasts past that expiry (the leeway), never less, and the key's range bounds the scan.
    static let deleteExpiredRows = [
        "login_attempts", "api_nonces", "used_identity_tokens", "refresh_tokens", "revoked_refresh_tokens", "sessions",
        "group_invitations",
        "relayed_codes",
    ].map { "DELETE FROM \($0) WHERE expires_at <= $1" } + [
        "DELETE FROM identity_token_uses WHERE token_expires_at <= $1 AND expires_at <= $1",
    ]
}
