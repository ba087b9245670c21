import Foundation

/// `StoreTransaction` on one PostgreSQL connection inside BEGIN … COMMIT. Same rules as
/// `SQLiteTransaction`: times are whole unix seconds (BIGINT), expired is `expires_at <= now`.
struct PostgresTransaction: StoreTransaction {
    let connection: PostgresConnection
    let scrub: @Sendable (String) -> String

    // MARK: - Statements, with failures as `StoreError`

    @discardableResult
    func run(_ sql: String, _ values: [PostgresValue] = []) throws -> Int {
        do {
            return try connection.run(sql, values)
        } catch {
            throw error.storeError(scrub: scrub)
        }
    }

    func query<T>(_ sql: String, _ values: [PostgresValue] = [], _ decode: (PostgresRow) -> T) throws -> [T] {
        do {
            return try connection.query(sql, values, decode)
        } catch {
            throw error.storeError(scrub: scrub)
        }
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
        try query("""
            SELECT state, nonce, binding_hash, created_at, expires_at, consumed_at
            FROM login_attempts WHERE state = $1
            """, [.text(state)], Self.decodeLoginAttempt).first
    }

    static func decodeLoginAttempt(_ row: PostgresRow) -> LoginAttempt {
        LoginAttempt(state: row.text("state"), nonce: row.text("nonce"), bindingHash: row.text("binding_hash"),
                     createdAt: row.date("created_at"), expiresAt: row.date("expires_at"),
                     consumedAt: row.optionalDate("consumed_at"))
    }

    func loginAttemptWithAuthorization(state: String) throws -> (attempt: LoginAttempt, authorization: ProviderAuthorization?)? {
        try query("""
            SELECT l.state, l.nonce, l.binding_hash, l.created_at, l.expires_at, l.consumed_at,
                   a.state_hash AS authorization_state_hash, a.client_id AS authorization_client_id,
                   a.redirect_uri AS authorization_redirect_uri, a.client_state AS authorization_client_state,
                   a.nonce AS authorization_nonce, a.code_challenge AS authorization_code_challenge,
                   a.scope AS authorization_scope, a.created_at AS authorization_created_at
            FROM login_attempts l LEFT JOIN provider_authorizations a ON a.state_hash = l.state
            WHERE l.state = $1
            """, [.text(state)]) { row in
            let authorization = row.optionalText("authorization_state_hash") == nil
                ? nil : Self.decodeProviderAuthorization(row, prefix: "authorization_")
            return (attempt: Self.decodeLoginAttempt(row), authorization: authorization)
        }.first
    }

    func consumeLoginAttempt(state: String, now: Date) throws -> Bool {
        try run("""
            UPDATE login_attempts SET consumed_at = $1
            WHERE state = $2 AND consumed_at IS NULL AND expires_at > $1
            """, [.date(now), .text(state)]) == 1
    }

    // MARK: - Users

    func upsertAppleUser(_ profile: AppleUserProfile, now: Date) throws -> (user: User, created: Bool) {
        guard !profile.sub.isEmpty else {
            throw StoreError.invalidArgument("an Apple user needs a non-empty sub")
        }
        if let existing = try user(provider: User.appleProvider, providerUserID: profile.sub) {
            let updated = existing.applyingSignIn(profile, now: now)
            if updated != existing {
                try update(updated)
            }
            return (updated, false)
        }
        let email = profile.email.nonBlank
        let created = try query("""
            INSERT INTO users (provider, provider_user_id, email, is_private_email, email_verified,
                               display_name, created_at, updated_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
            RETURNING \(Self.userColumns)
            """,
            [.text(User.appleProvider), .text(profile.sub), .optionalText(email),
             .bool(email != nil && profile.isPrivateEmail), .bool(email != nil && profile.emailVerified),
             .optionalText(profile.displayName.nonBlank), .date(now)], Self.decodeUser).first
        guard let created else {
            throw StoreError.database("INSERT INTO users returned no row")
        }
        return (created, true)
    }

    func user(id: Int64) throws -> User? {
        try query("SELECT \(Self.userColumns) FROM users WHERE id = $1", [.integer(id)], Self.decodeUser).first
    }

    func countUsers() throws -> Int {
        try query("SELECT COUNT(*) AS count FROM users") { Int($0.int64("count")) }.first ?? 0
    }

    func deleteUser(id: Int64) throws -> Bool {
        try run("DELETE FROM users WHERE id = $1", [.integer(id)]) == 1
    }

    func user(provider: String, providerUserID: String) throws -> User? {
        try query("SELECT \(Self.userColumns) FROM users WHERE provider = $1 AND provider_user_id = $2",
                  [.text(provider), .text(providerUserID)], Self.decodeUser).first
    }

    func setEmailForwarding(userID: Int64, isPrivateEmailEnabled: Bool, now: Date) throws {
        try run("""
            UPDATE users SET email_forwarding_enabled = $1, updated_at = $2
            WHERE id = $3 AND email_forwarding_enabled <> $1
            """, [.bool(isPrivateEmailEnabled), .date(now), .integer(userID)])
    }

    private func update(_ user: User) throws {
        try run("""
            UPDATE users SET email = $1, is_private_email = $2, email_verified = $3, display_name = $4, updated_at = $5
            WHERE id = $6
            """,
            [.optionalText(user.email), .bool(user.isPrivateEmail), .bool(user.emailVerified),
             .optionalText(user.displayName), .date(user.updatedAt), .integer(user.id)])
    }

    /// Qualified and aliased, so they can be joined with other tables and read by name.
    static let userColumns = """
        users.id AS user_id, users.provider, users.provider_user_id, users.email, users.is_private_email,
        users.email_verified, users.display_name, users.created_at AS user_created_at,
        users.updated_at AS user_updated_at, users.email_forwarding_enabled
        """

    static func decodeUser(_ row: PostgresRow) -> User {
        User(id: row.int64("user_id"), provider: row.text("provider"), providerUserID: row.text("provider_user_id"),
             email: row.optionalText("email"), isPrivateEmail: row.bool("is_private_email"),
             emailVerified: row.bool("email_verified"), displayName: row.optionalText("display_name"),
             createdAt: row.date("user_created_at"), updatedAt: row.date("user_updated_at"),
             emailForwardingEnabled: row.bool("email_forwarding_enabled"))
    }

    // MARK: - Sessions

    func insertSession(_ session: Session) throws {
        try run("""
            INSERT INTO sessions (id_hash, user_id, flow, nonce_verified, created_at, expires_at)
            VALUES ($1, $2, $3, $4, $5, $6)
            """,
            [.text(session.idHash), .integer(session.userID), .text(session.flow),
             .bool(session.nonceVerified), .date(session.createdAt), .date(session.expiresAt)])
    }

    func session(idHash: String, now: Date) throws -> (session: Session, user: User)? {
        try query("""
            SELECT sessions.id_hash, sessions.flow, sessions.nonce_verified,
                   sessions.created_at, sessions.expires_at, \(Self.userColumns)
            FROM sessions JOIN users ON users.id = sessions.user_id
            WHERE sessions.id_hash = $1 AND sessions.expires_at > $2
            """, [.text(idHash), .date(now)]) { row -> (session: Session, user: User) in
            let user = Self.decodeUser(row)
            let session = Session(idHash: row.text("id_hash"), userID: user.id, flow: row.text("flow"),
                                  nonceVerified: row.bool("nonce_verified"), createdAt: row.date("created_at"),
                                  expiresAt: row.date("expires_at"))
            return (session: session, user: user)
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
        let expiring = ["login_attempts", "api_nonces", "used_identity_tokens", "refresh_tokens",
                        "revoked_refresh_tokens", "sessions"]
        var deleted = 0
        for table in expiring {
            deleted += try run("DELETE FROM \(table) WHERE expires_at <= $1", [.date(now)])
        }
        deleted += try run(
            "DELETE FROM apple_notifications WHERE received_at <= $1",
            [.date(now.addingTimeInterval(-StoreRetention.notificationIDs))])
        return deleted
    }
}
