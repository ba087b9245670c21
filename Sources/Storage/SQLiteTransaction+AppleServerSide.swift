import Foundation

extension SQLiteTransaction {
    // MARK: - Apple refresh tokens

    func upsertAppleToken(_ record: AppleTokenRecord) throws {
        try StoreInput.validate(record)
        try connection.run("""
            INSERT INTO apple_tokens (user_id, client_id, encrypted_refresh_token, updated_at) VALUES (?, ?, ?, ?)
            ON CONFLICT (user_id) DO UPDATE SET client_id = excluded.client_id,
                encrypted_refresh_token = excluded.encrypted_refresh_token, updated_at = excluded.updated_at
            """,
            [.integer(record.userID), .text(record.clientID), .blob(record.encryptedRefreshToken),
             .date(record.updatedAt)])
    }

    func appleToken(userID: Int64) throws -> AppleTokenRecord? {
        let mapping = TableMapping.appleTokens
        return try connection.query("SELECT \(mapping.columnList) FROM apple_tokens WHERE user_id = ?",
                                    [.integer(userID)]) { try mapping.decode($0) }.first
    }

    func deleteAppleToken(userID: Int64) throws -> Bool {
        try connection.run("DELETE FROM apple_tokens WHERE user_id = ?", [.integer(userID)]) == 1
    }

    // MARK: - Revocation queue

    func enqueueRevocation(clientID: String, encryptedToken: [UInt8], tokenTypeHint: String, now: Date) throws -> Int64 {
        try StoreInput.validateRevocation(encryptedToken: encryptedToken)
        let id = try connection.query("""
            INSERT INTO pending_revocations (client_id, encrypted_token, token_type_hint, attempts, next_attempt_at, created_at)
            VALUES (?1, ?2, ?3, 0, ?4, ?4)
            RETURNING id
            """, [.text(clientID), .blob(encryptedToken), .text(tokenTypeHint), .date(now)]) {
            try $0.requiredInteger("id")
        }.first
        guard let id else {
            throw StoreError.database("INSERT INTO pending_revocations returned no id")
        }
        return id
    }

    func dueRevocations(now: Date, limit: Int) throws -> [PendingRevocation] {
        let mapping = TableMapping.pendingRevocations
        return try connection.query("""
            SELECT \(mapping.columnList) FROM pending_revocations WHERE next_attempt_at <= ?
            ORDER BY next_attempt_at, id LIMIT ?
            """, [.date(now), .integer(Int64(max(0, limit)))]) { try mapping.decode($0) }
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
        try connection.query("SELECT COUNT(*) AS count FROM pending_revocations") {
            Int(try $0.requiredInteger("count"))
        }.first ?? 0
    }

    // MARK: - Notifications

    func recordNotification(jti: String, now: Date) throws -> Bool {
        try connection.run("""
            INSERT INTO apple_notifications (jti, received_at) VALUES (?, ?) ON CONFLICT (jti) DO NOTHING
            """, [.text(jti), .date(now)]) == 1
    }
}
