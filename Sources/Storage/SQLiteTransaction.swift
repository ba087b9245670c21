import Foundation

/// `StoreTransaction` on one SQLite connection inside BEGIN … COMMIT.
struct SQLiteTransaction: StoreTransaction {
    let connection: SQLiteConnection

    // MARK: - Login attempts

    func insertLoginAttempt(_ attempt: LoginAttempt) throws {
        try connection.run("""
            INSERT INTO login_attempts (state, nonce, binding_hash, created_at, expires_at, consumed_at)
            VALUES (?, ?, ?, ?, ?, ?)
            """,
            [.text(attempt.state), .text(attempt.nonce), .text(attempt.bindingHash),
             .date(attempt.createdAt), .date(attempt.expiresAt), .optionalDate(attempt.consumedAt)])
    }

    func loginAttempt(state: String) throws -> LoginAttempt? {
        let mapping = TableMapping.loginAttempts
        return try connection.query("SELECT \(mapping.columnList) FROM login_attempts WHERE state = ?",
                                    [.text(state)]) { try mapping.decode($0) }.first
    }

    func loginAttemptWithAuthorization(state: String) throws -> (attempt: LoginAttempt, authorization: ProviderAuthorization?)? {
        try connection.query(Self.loginAttemptWithAuthorization, [.text(state)]) { row in
            let authorization = try row.text("authorization_state_hash") == nil
                ? nil : TableMapping.providerAuthorizations.decode(row, prefix: "authorization_")
            return (attempt: try TableMapping.loginAttempts.decode(row), authorization: authorization)
        }.first
    }

    /// Made once: the callback runs it for every sign-in. The attempt's columns keep their names.
    private static let loginAttemptWithAuthorization = """
        SELECT \(TableMapping.loginAttempts.selectList()),
               \(TableMapping.providerAuthorizations.selectList(prefix: "authorization_"))
        FROM login_attempts LEFT JOIN provider_authorizations ON provider_authorizations.state_hash = login_attempts.state
        WHERE login_attempts.state = ?
        """

    func consumeLoginAttempt(state: String, now: Date) throws -> Bool {
        let changed = try connection.run("""
            UPDATE login_attempts SET consumed_at = ?1
            WHERE state = ?2 AND consumed_at IS NULL AND expires_at > ?1
            """, [.date(now), .text(state)])
        return changed == 1
    }

    // MARK: - Users

    func upsertAppleUser(_ profile: AppleUserProfile, now: Date) throws -> (user: User, created: Bool) {
        try StoreInput.validate(profile)
        let new = User.firstSignIn(profile, now: now)
        // A new user is one INSERT, and its row is what was bound plus the id SQLite gave it: built here rather than
        // read back with RETURNING, which materialized the row in a temporary B-tree and decoded it by column name
        // (a third of the writer thread's instructions per sign-in). A returning user conflicts and is read next.
        let inserted = try connection.run("""
            INSERT INTO users (provider, provider_user_id, email, is_private_email, email_verified,
                               display_name, created_at, updated_at, email_forwarding_enabled)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (provider, provider_user_id) DO NOTHING
            """,
            [.text(new.provider), .text(new.providerUserID), .optionalText(new.email), .bool(new.isPrivateEmail),
             .bool(new.emailVerified), .optionalText(new.displayName), .date(new.createdAt),
             .date(new.updatedAt), .bool(new.emailForwardingEnabled)])
        if inserted == 1 {
            var user = new
            user.id = connection.lastInsertedRowID
            // As stored: whole seconds.
            user.createdAt = StoredTime.date(fromUnixSeconds: try StoredTime.unixSeconds(new.createdAt))
            user.updatedAt = StoredTime.date(fromUnixSeconds: try StoredTime.unixSeconds(new.updatedAt))
            return (user, true)
        }
        guard let existing = try user(provider: User.appleProvider, providerUserID: profile.sub) else {
            throw StoreError.database("user \(profile.sub) neither inserted nor found")
        }
        let updated = existing.applyingSignIn(profile, now: now)
        if updated != existing {
            try update(updated)
        }
        return (updated, false)
    }

    func user(id: Int64) throws -> User? {
        let mapping = TableMapping.users
        return try connection.query("SELECT \(mapping.columnList) FROM users WHERE id = ?", [.integer(id)]) {
            try mapping.decode($0)
        }.first
    }

    func countUsers() throws -> Int {
        try connection.query("SELECT COUNT(*) AS count FROM users") { Int(try $0.requiredInteger("count")) }.first ?? 0
    }

    func deleteUser(id: Int64) throws -> Bool {
        try connection.run("DELETE FROM users WHERE id = ?", [.integer(id)]) == 1
    }

    func user(provider: String, providerUserID: String) throws -> User? {
        let mapping = TableMapping.users
        return try connection.query(
            "SELECT \(mapping.columnList) FROM users WHERE provider = ? AND provider_user_id = ?",
            [.text(provider), .text(providerUserID)]) { try mapping.decode($0) }.first
    }

    func setEmailForwarding(userID: Int64, isPrivateEmailEnabled: Bool, now: Date) throws {
        try connection.run("""
            UPDATE users SET email_forwarding_enabled = ?1, updated_at = ?2
            WHERE id = ?3 AND email_forwarding_enabled != ?1
            """, [.bool(isPrivateEmailEnabled), .date(now), .integer(userID)])
    }

    private func update(_ user: User) throws {
        try connection.run("""
            UPDATE users SET email = ?, is_private_email = ?, email_verified = ?, display_name = ?, updated_at = ?
            WHERE id = ?
            """,
            [.optionalText(user.email), .bool(user.isPrivateEmail), .bool(user.emailVerified),
             .optionalText(user.displayName), .date(user.updatedAt), .integer(user.id)])
    }

    // MARK: - Sessions

    func insertSession(_ session: Session) throws {
        try connection.run("""
            INSERT INTO sessions (id_hash, user_id, flow, nonce_verified, created_at, expires_at)
            VALUES (?, ?, ?, ?, ?, ?)
            """,
            [.text(session.idHash), .integer(session.userID), .text(session.flow),
             .bool(session.nonceVerified), .date(session.createdAt), .date(session.expiresAt)])
    }

    func session(idHash: String, now: Date) throws -> (session: Session, user: User)? {
        let sessions = TableMapping.sessions, users = TableMapping.users
        return try connection.query("""
            SELECT \(sessions.selectList(prefix: "session_")), \(users.selectList(prefix: "user_"))
            FROM sessions JOIN users ON users.id = sessions.user_id
            WHERE sessions.id_hash = ? AND sessions.expires_at > ?
            """, [.text(idHash), .date(now)]) { row -> (session: Session, user: User) in
            (session: try sessions.decode(row, prefix: "session_"), user: try users.decode(row, prefix: "user_"))
        }.first
    }

    func deleteSession(idHash: String) throws -> Bool {
        try connection.run("DELETE FROM sessions WHERE id_hash = ?", [.text(idHash)]) == 1
    }

    func deleteSessions(userID: Int64) throws -> Int {
        try connection.run("DELETE FROM sessions WHERE user_id = ?", [.integer(userID)])
    }

    // MARK: - Housekeeping

    func deleteExpired(now: Date) throws -> Int {
        let expiring = ["login_attempts", "api_nonces", "used_identity_tokens", "refresh_tokens",
                        "revoked_refresh_tokens", "sessions"]
        var deleted = 0
        for table in expiring {
            deleted += try connection.run("DELETE FROM \(table) WHERE expires_at <= ?", [.date(now)])
        }
        // A refusal lasts past the token's own expiry (the leeway), never less: the key's range bounds the scan.
        deleted += try connection.run(
            "DELETE FROM identity_token_uses WHERE token_expires_at <= ?1 AND expires_at <= ?1", [.date(now)])
        deleted += try connection.run(
            "DELETE FROM apple_notifications WHERE received_at <= ?",
            [.date(now.addingTimeInterval(-StoreRetention.notificationIDs))])
        return deleted
    }
}
