import Foundation

extension SQLTransaction {
    // MARK: - Apple refresh tokens

    func upsertAppleToken(_ record: AppleTokenRecord) throws {
        try StoreInput.validate(record)
        try run("""
            INSERT INTO apple_tokens (user_id, client_id, encrypted_refresh_token, updated_at) VALUES ($1, $2, $3, $4)
            ON CONFLICT (user_id) DO UPDATE SET client_id = excluded.client_id,
                encrypted_refresh_token = excluded.encrypted_refresh_token, updated_at = excluded.updated_at
            """,
            [.integer(record.userID), .text(record.clientID), .blob(record.encryptedRefreshToken),
             .date(record.updatedAt)])
    }

    func appleToken(userID: Int64) throws -> AppleTokenRecord? {
        try select(.appleTokens, " WHERE user_id = $1", [.integer(userID)]).first
    }

    func deleteAppleToken(userID: Int64) throws -> Bool {
        try run("DELETE FROM apple_tokens WHERE user_id = $1", [.integer(userID)]) == 1
    }

    // MARK: - Revocation queue

    func enqueueRevocation(clientID: String, encryptedToken: [UInt8], tokenTypeHint: String, now: Date) throws -> Int64 {
        try StoreInput.validateRevocation(encryptedToken: encryptedToken)
        let id = try connection.insertReturningID(SQLStatements.enqueueRevocation.text(for: dialect),
                                                  [.text(clientID), .blob(encryptedToken), .text(tokenTypeHint), .date(now)])
        guard let id else {
            throw StoreError.database("INSERT INTO pending_revocations returned no id")
        }
        return id
    }

    func dueRevocations(now: Date, limit: Int) throws -> [PendingRevocation] {
        try select(.pendingRevocations, " WHERE next_attempt_at <= $1 ORDER BY next_attempt_at, id LIMIT $2",
                   [.date(now), .integer(Int64(max(0, limit)))])
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
        try query("SELECT COUNT(*) AS count FROM pending_revocations") { Int(try $0.requiredInteger("count")) }.first ?? 0
    }

    func oldestPendingRevocationCreatedAt() throws -> Date? {
        try query("SELECT MIN(created_at) AS oldest FROM pending_revocations") { try $0.optionalDate("oldest") }.first ?? nil
    }

    // MARK: - Notifications

    func recordNotification(jti: String, now: Date) throws -> Bool {
        try run("INSERT INTO apple_notifications (jti, received_at) VALUES ($1, $2) ON CONFLICT (jti) DO NOTHING",
                [.text(jti), .date(now)]) == 1
    }
}

extension SQLStatements {
    static let enqueueRevocation = DialectStatement { dialect in """
        INSERT INTO pending_revocations (client_id, encrypted_token, token_type_hint, attempts, next_attempt_at, created_at)
        VALUES ($1, $2, $3, 0, $4, $4)\(dialect.returningID)
        """
    }
}
