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
        try connection.query("""
            SELECT state, nonce, binding_hash, created_at, expires_at, consumed_at
            FROM login_attempts WHERE state = ?
            """, [.text(state)]) { row in
            LoginAttempt(state: row.text(0), nonce: row.text(1), bindingHash: row.text(2),
                         createdAt: row.date(3), expiresAt: row.date(4), consumedAt: row.optionalDate(5))
        }.first
    }

    func consumeLoginAttempt(state: String, now: Date) throws -> Bool {
        let changed = try connection.run("""
            UPDATE login_attempts SET consumed_at = ?1
            WHERE state = ?2 AND consumed_at IS NULL AND expires_at > ?1
            """, [.date(now), .text(state)])
        return changed == 1
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
        let id = try connection.query("""
            INSERT INTO users (provider, provider_user_id, email, is_private_email, email_verified,
                               display_name, created_at, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            RETURNING id
            """,
            [.text(User.appleProvider), .text(profile.sub), .optionalText(email),
             .bool(email != nil && profile.isPrivateEmail), .bool(email != nil && profile.emailVerified),
             .optionalText(profile.displayName.nonBlank), .date(now), .date(now)]) { $0.int64(0) }.first
        guard let id else {
            throw StoreError.database("INSERT INTO users returned no id")
        }
        guard let created = try user(id: id) else {
            throw StoreError.database("user \(id) vanished right after its insert")
        }
        return (created, true)
    }

    func user(id: Int64) throws -> User? {
        try connection.query("SELECT \(Self.userColumns) FROM users WHERE id = ?", [.integer(id)]) {
            Self.decodeUser($0, from: 0)
        }.first
    }

    func countUsers() throws -> Int {
        try connection.query("SELECT COUNT(*) FROM users", []) { Int($0.int64(0)) }.first ?? 0
    }

    func deleteUser(id: Int64) throws -> Bool {
        try connection.run("DELETE FROM users WHERE id = ?", [.integer(id)]) == 1
    }

    func user(provider: String, providerUserID: String) throws -> User? {
        try connection.query(
            "SELECT \(Self.userColumns) FROM users WHERE provider = ? AND provider_user_id = ?",
            [.text(provider), .text(providerUserID)]) { Self.decodeUser($0, from: 0) }.first
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

    private static let userColumns = """
        users.id, users.provider, users.provider_user_id, users.email, users.is_private_email,
        users.email_verified, users.display_name, users.created_at, users.updated_at,
        users.email_forwarding_enabled
        """

    /// Reads the ten `userColumns` starting at column `first`.
    private static func decodeUser(_ row: SQLiteRow, from first: Int32) -> User {
        User(id: row.int64(first), provider: row.text(first + 1), providerUserID: row.text(first + 2),
             email: row.optionalText(first + 3), isPrivateEmail: row.bool(first + 4),
             emailVerified: row.bool(first + 5), displayName: row.optionalText(first + 6),
             createdAt: row.date(first + 7), updatedAt: row.date(first + 8),
             emailForwardingEnabled: row.bool(first + 9))
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
        try connection.query("""
            SELECT sessions.id_hash, sessions.user_id, sessions.flow, sessions.nonce_verified,
                   sessions.created_at, sessions.expires_at, \(Self.userColumns)
            FROM sessions JOIN users ON users.id = sessions.user_id
            WHERE sessions.id_hash = ? AND sessions.expires_at > ?
            """, [.text(idHash), .date(now)]) { row -> (session: Session, user: User) in
            let session = Session(idHash: row.text(0), userID: row.int64(1), flow: row.text(2),
                                  nonceVerified: row.bool(3), createdAt: row.date(4), expiresAt: row.date(5))
            return (session: session, user: Self.decodeUser(row, from: 6))
        }.first
    }

    func deleteSession(idHash: String) throws -> Bool {
        try connection.run("DELETE FROM sessions WHERE id_hash = ?", [.text(idHash)]) == 1
    }

    func deleteSessions(userID: Int64) throws -> Int {
        try connection.run("DELETE FROM sessions WHERE user_id = ?", [.integer(userID)])
    }

    // MARK: - Housekeeping

    /// Far beyond the `exp` of any notification token: replayed later, it fails verification.
    static let notificationRetention: TimeInterval = 30 * 24 * 60 * 60

    func deleteExpired(now: Date) throws -> Int {
        let expiring = ["login_attempts", "api_nonces", "used_identity_tokens", "refresh_tokens", "sessions"]
        var deleted = 0
        for table in expiring {
            deleted += try connection.run("DELETE FROM \(table) WHERE expires_at <= ?", [.date(now)])
        }
        deleted += try connection.run(
            "DELETE FROM apple_notifications WHERE received_at <= ?",
            [.date(now.addingTimeInterval(-Self.notificationRetention))])
        return deleted
    }
}
