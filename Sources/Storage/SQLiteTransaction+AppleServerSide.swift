import Foundation

extension SQLiteTransaction {
    // MARK: - Apple refresh tokens

    func upsertAppleToken(_ record: AppleTokenRecord) throws {
        guard !record.encryptedRefreshToken.isEmpty else {
            throw StoreError.invalidArgument("an Apple token record needs the encrypted token")
        }
        try connection.run("""
            INSERT INTO apple_tokens (user_id, client_id, encrypted_refresh_token, updated_at) VALUES (?, ?, ?, ?)
            ON CONFLICT (user_id) DO UPDATE SET client_id = excluded.client_id,
                encrypted_refresh_token = excluded.encrypted_refresh_token, updated_at = excluded.updated_at
            """,
            [.integer(record.userID), .text(record.clientID), .blob(record.encryptedRefreshToken),
             .date(record.updatedAt)])
    }

    func appleToken(userID: Int64) throws -> AppleTokenRecord? {
        try connection.query("""
            SELECT user_id, client_id, encrypted_refresh_token, updated_at FROM apple_tokens WHERE user_id = ?
            """, [.integer(userID)]) { row in
            AppleTokenRecord(userID: row.int64(0), clientID: row.text(1), encryptedRefreshToken: row.blob(2),
                             updatedAt: row.date(3))
        }.first
    }

    func deleteAppleToken(userID: Int64) throws -> Bool {
        try connection.run("DELETE FROM apple_tokens WHERE user_id = ?", [.integer(userID)]) == 1
    }

    // MARK: - Revocation queue

    func enqueueRevocation(clientID: String, encryptedToken: [UInt8], tokenTypeHint: String, now: Date) throws -> Int64 {
        guard !encryptedToken.isEmpty else {
            throw StoreError.invalidArgument("a revocation needs the encrypted token")
        }
        let id = try connection.query("""
            INSERT INTO pending_revocations (client_id, encrypted_token, token_type_hint, attempts, next_attempt_at, created_at)
            VALUES (?1, ?2, ?3, 0, ?4, ?4)
            RETURNING id
            """, [.text(clientID), .blob(encryptedToken), .text(tokenTypeHint), .date(now)]) { $0.int64(0) }.first
        guard let id else {
            throw StoreError.database("INSERT INTO pending_revocations returned no id")
        }
        return id
    }

    func dueRevocations(now: Date, limit: Int) throws -> [PendingRevocation] {
        try connection.query("""
            SELECT id, client_id, encrypted_token, token_type_hint, attempts, next_attempt_at, last_error, created_at
            FROM pending_revocations WHERE next_attempt_at <= ?
            ORDER BY next_attempt_at, id LIMIT ?
            """, [.date(now), .integer(Int64(max(0, limit)))]) { row in
            PendingRevocation(id: row.int64(0), clientID: row.text(1), encryptedToken: row.blob(2),
                              tokenTypeHint: row.text(3), attempts: Int(row.int64(4)),
                              nextAttemptAt: row.date(5), lastError: row.optionalText(6), createdAt: row.date(7))
        }
    }

    func completeRevocation(id: Int64) throws {
        try connection.run("DELETE FROM pending_revocations WHERE id = ?", [.integer(id)])
    }

    func postponeRevocation(id: Int64, nextAttemptAt: Date, error: String) throws {
        try connection.run("""
            UPDATE pending_revocations SET attempts = attempts + 1, next_attempt_at = ?, last_error = ?
            WHERE id = ?
            """, [.date(nextAttemptAt), .text(error), .integer(id)])
    }

    func pendingRevocationCount() throws -> Int {
        try connection.query("SELECT COUNT(*) FROM pending_revocations") { Int($0.int64(0)) }.first ?? 0
    }

    // MARK: - Notifications

    func recordNotification(jti: String, now: Date) throws -> Bool {
        try connection.run("""
            INSERT INTO apple_notifications (jti, received_at) VALUES (?, ?) ON CONFLICT (jti) DO NOTHING
            """, [.text(jti), .date(now)]) == 1
    }
}
