import Foundation

extension PostgresTransaction {
    // MARK: - API nonces

    func insertAPINonce(_ nonce: APINonce) throws {
        try run("INSERT INTO api_nonces (nonce, created_at, expires_at, consumed_at) VALUES ($1, $2, $3, $4)",
                [.text(nonce.nonce), .date(nonce.createdAt), .date(nonce.expiresAt), .optionalDate(nonce.consumedAt)])
    }

    func consumeAPINonce(_ nonce: String, now: Date) throws -> APINonceOutcome {
        let changed = try run("""
            UPDATE api_nonces SET consumed_at = $1
            WHERE nonce = $2 AND consumed_at IS NULL AND expires_at > $1
            """, [.date(now), .text(nonce)])
        if changed == 1 {
            return .consumed
        }
        // Same serializable transaction: what the UPDATE saw is what this reads.
        let found = try query("SELECT consumed_at FROM api_nonces WHERE nonce = $1", [.text(nonce)]) {
            $0.optionalDate("consumed_at")
        }
        guard let consumedAt = found.first else { return .unknown }
        return consumedAt == nil ? .expired : .alreadyUsed
    }

    // MARK: - Identity tokens

    /// Keyed by the digest alone: PostgreSQL stores rows in a heap in arrival order whatever the key.
    func recordIdentityTokenUse(tokenHash: String, tokenExpiresAt: Date, expiresAt: Date, now: Date) throws -> Bool {
        // The upsert changes nothing (0 rows) exactly when an unexpired record exists.
        try run("""
            INSERT INTO used_identity_tokens (token_hash, expires_at) VALUES ($1, $2)
            ON CONFLICT (token_hash) DO UPDATE SET expires_at = excluded.expires_at
            WHERE used_identity_tokens.expires_at <= $3
            """, [.text(tokenHash), .date(expiresAt), .date(now)]) == 1
    }

    // MARK: - Refresh tokens

    func insertRefreshToken(_ token: RefreshToken) throws {
        // Inserting through the session row refuses a token whose session belongs to
        // another user, which a foreign key alone would let through.
        let inserted = try run("""
            INSERT INTO refresh_tokens (token_hash, family_id, session_id_hash, user_id, created_at, expires_at, rotated_at)
            SELECT $1, $2, id_hash, user_id, $3, $4, $5 FROM sessions WHERE id_hash = $6 AND user_id = $7
            """,
            [.text(token.tokenHash), .text(token.familyID), .date(token.createdAt), .date(token.expiresAt),
             .optionalDate(token.rotatedAt), .text(token.sessionIDHash), .integer(token.userID)])
        guard inserted == 1 else {
            throw StoreError.conflict("refresh token for a session that does not exist or belongs to another user")
        }
    }

    func rotateRefreshToken(tokenHash: String, now: Date) throws -> RefreshRotation {
        let rotated = try query("""
            UPDATE refresh_tokens SET rotated_at = $1
            WHERE token_hash = $2 AND rotated_at IS NULL AND expires_at > $1
              AND EXISTS (SELECT 1 FROM sessions
                          WHERE sessions.id_hash = refresh_tokens.session_id_hash AND sessions.expires_at > $1)
            RETURNING \(Self.refreshTokenColumns)
            """, [.date(now), .text(tokenHash)], Self.decodeRefreshToken)
        if let token = rotated.first {
            return .rotated(token)
        }
        let found = try query("SELECT \(Self.refreshTokenColumns) FROM refresh_tokens WHERE token_hash = $1",
                              [.text(tokenHash)], Self.decodeRefreshToken)
        if let token = found.first {
            // Reuse wins over expiry: a rotated token presented again is a replay either way.
            return token.rotatedAt == nil ? .expired : .reused(token)
        }
        let revoked = try query("SELECT \(Self.refreshTokenColumns) FROM revoked_refresh_tokens WHERE token_hash = $1",
                                [.text(tokenHash)], Self.decodeRefreshToken)
        return revoked.first.map(RefreshRotation.reused) ?? .unknown
    }

    func revokeRefreshFamily(_ familyID: String) throws -> Int {
        try run("""
            INSERT INTO revoked_refresh_tokens (\(Self.refreshTokenColumns))
            SELECT \(Self.refreshTokenColumns) FROM refresh_tokens WHERE family_id = $1
            ON CONFLICT (token_hash) DO NOTHING
            """, [.text(familyID)])
        let sessionIDHashes = try query(
            "DELETE FROM refresh_tokens WHERE family_id = $1 RETURNING session_id_hash",
            [.text(familyID)]) { $0.text("session_id_hash") }
        for idHash in Set(sessionIDHashes) {
            try run("DELETE FROM sessions WHERE id_hash = $1", [.text(idHash)])
        }
        return sessionIDHashes.count
    }

    private static let refreshTokenColumns =
        "token_hash, family_id, session_id_hash, user_id, created_at, expires_at, rotated_at"

    private static func decodeRefreshToken(_ row: PostgresRow) -> RefreshToken {
        RefreshToken(tokenHash: row.text("token_hash"), familyID: row.text("family_id"),
                     sessionIDHash: row.text("session_id_hash"), userID: row.int64("user_id"),
                     createdAt: row.date("created_at"), expiresAt: row.date("expires_at"),
                     rotatedAt: row.optionalDate("rotated_at"))
    }
}
