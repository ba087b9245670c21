import Foundation

extension SQLiteTransaction {
    // MARK: - API nonces

    func insertAPINonce(_ nonce: APINonce) throws {
        try connection.run("""
            INSERT INTO api_nonces (nonce, created_at, expires_at, consumed_at) VALUES (?, ?, ?, ?)
            """,
            [.text(nonce.nonce), .date(nonce.createdAt), .date(nonce.expiresAt), .optionalDate(nonce.consumedAt)])
    }

    func consumeAPINonce(_ nonce: String, now: Date) throws -> APINonceOutcome {
        let changed = try connection.run("""
            UPDATE api_nonces SET consumed_at = ?1
            WHERE nonce = ?2 AND consumed_at IS NULL AND expires_at > ?1
            """, [.date(now), .text(nonce)])
        if changed == 1 {
            return .consumed
        }
        // Same write transaction: nobody can change the row between the two statements.
        let found = try connection.query(
            "SELECT consumed_at FROM api_nonces WHERE nonce = ?", [.text(nonce)]) { try $0.optionalDate("consumed_at") }
        guard let consumedAt = found.first else { return .unknown }
        return consumedAt == nil ? .expired : .alreadyUsed
    }

    // MARK: - Identity tokens

    func recordIdentityTokenUse(tokenHash: String, tokenExpiresAt: Date, expiresAt: Date, now: Date) throws -> Bool {
        // A record from before migration 9, in the table keyed by digest alone (empty once those have expired).
        let earlier = try connection.query("""
            SELECT 1 AS found FROM used_identity_tokens WHERE token_hash = ?1 AND expires_at > ?2
            """, [.text(tokenHash), .date(now)]) { try $0.requiredInteger("found") }
        guard earlier.isEmpty else { return false }
        // The upsert changes nothing (0 rows) exactly when an unexpired record exists.
        let changed = try connection.run("""
            INSERT INTO identity_token_uses (token_expires_at, token_hash, expires_at) VALUES (?1, ?2, ?3)
            ON CONFLICT (token_expires_at, token_hash) DO UPDATE SET expires_at = excluded.expires_at
            WHERE identity_token_uses.expires_at <= ?4
            """, [.date(tokenExpiresAt), .text(tokenHash), .date(expiresAt), .date(now)])
        return changed == 1
    }

    // MARK: - Refresh tokens

    func insertRefreshToken(_ token: RefreshToken) throws {
        // Inserting through the session row refuses a token whose session belongs to
        // another user, which a foreign key alone would let through.
        let inserted = try connection.run("""
            INSERT INTO refresh_tokens (token_hash, family_id, session_id_hash, user_id, created_at, expires_at, rotated_at)
            SELECT ?, ?, id_hash, user_id, ?, ?, ? FROM sessions WHERE id_hash = ? AND user_id = ?
            """,
            [.text(token.tokenHash), .text(token.familyID), .date(token.createdAt), .date(token.expiresAt),
             .optionalDate(token.rotatedAt), .text(token.sessionIDHash), .integer(token.userID)])
        guard inserted == 1 else {
            throw StoreError.conflict("refresh token for a session that does not exist or belongs to another user")
        }
    }

    func rotateRefreshToken(tokenHash: String, now: Date) throws -> RefreshRotation {
        let mapping = TableMapping.refreshTokens
        let rotated = try connection.query("""
            UPDATE refresh_tokens SET rotated_at = ?1
            WHERE token_hash = ?2 AND rotated_at IS NULL AND expires_at > ?1
              AND EXISTS (SELECT 1 FROM sessions
                          WHERE sessions.id_hash = refresh_tokens.session_id_hash AND sessions.expires_at > ?1)
            RETURNING \(mapping.columnList)
            """, [.date(now), .text(tokenHash)]) { try mapping.decode($0) }
        if let token = rotated.first {
            return .rotated(token)
        }
        let found = try connection.query(
            "SELECT \(mapping.columnList) FROM refresh_tokens WHERE token_hash = ?",
            [.text(tokenHash)]) { try mapping.decode($0) }
        if let token = found.first {
            // Reuse wins over expiry: a rotated token presented again is a replay either way.
            return token.rotatedAt == nil ? .expired : .reused(token)
        }
        let revoked = try connection.query(
            "SELECT \(mapping.columnList) FROM revoked_refresh_tokens WHERE token_hash = ?",
            [.text(tokenHash)]) { try mapping.decode($0) }
        return revoked.first.map(RefreshRotation.reused) ?? .unknown
    }

    func revokeRefreshFamily(_ familyID: String) throws -> Int {
        let columns = TableMapping.refreshTokens.columnList
        try connection.run("""
            INSERT INTO revoked_refresh_tokens (\(columns))
            SELECT \(columns) FROM refresh_tokens WHERE family_id = ?
            ON CONFLICT (token_hash) DO NOTHING
            """, [.text(familyID)])
        let sessionIDHashes = try connection.query(
            "DELETE FROM refresh_tokens WHERE family_id = ? RETURNING session_id_hash",
            [.text(familyID)]) { try $0.requiredText("session_id_hash") }
        for idHash in Set(sessionIDHashes) {
            try connection.run("DELETE FROM sessions WHERE id_hash = ?", [.text(idHash)])
        }
        return sessionIDHashes.count
    }
}
