import Foundation

extension PostgresTransaction {
    // MARK: - Apple refresh tokens

    func upsertAppleToken(_ record: AppleTokenRecord) throws {
        guard !record.encryptedRefreshToken.isEmpty else {
            throw StoreError.invalidArgument("an Apple token record needs the encrypted token")
        }
        try run("""
            INSERT INTO apple_tokens (user_id, client_id, encrypted_refresh_token, updated_at) VALUES ($1, $2, $3, $4)
            ON CONFLICT (user_id) DO UPDATE SET client_id = excluded.client_id,
                encrypted_refresh_token = excluded.encrypted_refresh_token, updated_at = excluded.updated_at
            """,
            [.integer(record.userID), .text(record.clientID), .blob(record.encryptedRefreshToken),
             .date(record.updatedAt)])
    }

    func appleToken(userID: Int64) throws -> AppleTokenRecord? {
        try query("""
            SELECT user_id, client_id, encrypted_refresh_token, updated_at FROM apple_tokens WHERE user_id = $1
            """, [.integer(userID)]) { row in
            AppleTokenRecord(userID: row.int64("user_id"), clientID: row.text("client_id"),
                             encryptedRefreshToken: row.blob("encrypted_refresh_token"), updatedAt: row.date("updated_at"))
        }.first
    }

    func deleteAppleToken(userID: Int64) throws -> Bool {
        try run("DELETE FROM apple_tokens WHERE user_id = $1", [.integer(userID)]) == 1
    }

    // MARK: - Revocation queue

    func enqueueRevocation(clientID: String, encryptedToken: [UInt8], tokenTypeHint: String, now: Date) throws -> Int64 {
        guard !encryptedToken.isEmpty else {
            throw StoreError.invalidArgument("a revocation needs the encrypted token")
        }
        let id = try query("""
            INSERT INTO pending_revocations (client_id, encrypted_token, token_type_hint, attempts, next_attempt_at, created_at)
            VALUES ($1, $2, $3, 0, $4, $4)
            RETURNING id
            """, [.text(clientID), .blob(encryptedToken), .text(tokenTypeHint), .date(now)]) { $0.int64("id") }.first
        guard let id else {
            throw StoreError.database("INSERT INTO pending_revocations returned no id")
        }
        return id
    }

    func dueRevocations(now: Date, limit: Int) throws -> [PendingRevocation] {
        try query("""
            SELECT id, client_id, encrypted_token, token_type_hint, attempts, next_attempt_at, last_error, created_at
            FROM pending_revocations WHERE next_attempt_at <= $1
            ORDER BY next_attempt_at, id LIMIT $2
            """, [.date(now), .integer(Int64(max(0, limit)))]) { row in
            PendingRevocation(id: row.int64("id"), clientID: row.text("client_id"),
                              encryptedToken: row.blob("encrypted_token"), tokenTypeHint: row.text("token_type_hint"),
                              attempts: Int(row.int64("attempts")), nextAttemptAt: row.date("next_attempt_at"),
                              lastError: row.optionalText("last_error"), createdAt: row.date("created_at"))
        }
    }

    func completeRevocation(id: Int64) throws {
        try run("DELETE FROM pending_revocations WHERE id = $1", [.integer(id)])
    }

    func postponeRevocation(id: Int64, nextAttemptAt: Date, error: String) throws {
        try run("""
            UPDATE pending_revocations SET attempts = attempts + 1, next_attempt_at = $1, last_error = $2
            WHERE id = $3
            """, [.date(nextAttemptAt), .text(error), .integer(id)])
    }

    func pendingRevocationCount() throws -> Int {
        try query("SELECT COUNT(*) AS count FROM pending_revocations") { Int($0.int64("count")) }.first ?? 0
    }

    // MARK: - Notifications

    func recordNotification(jti: String, now: Date) throws -> Bool {
        try run("INSERT INTO apple_notifications (jti, received_at) VALUES ($1, $2) ON CONFLICT (jti) DO NOTHING",
                [.text(jti), .date(now)]) == 1
    }
}
