import Foundation

extension SQLTransaction {
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
        // Why not: the row as committed now. At READ COMMITTED the UPDATE waited for a concurrent consumer's commit,
        // so a nonce it could not take is seen used here; SERIALIZABLE reads the UPDATE's own snapshot.
        let found = try query("SELECT consumed_at FROM api_nonces WHERE nonce = $1", [.text(nonce)]) {
            try $0.optionalDate("consumed_at")
        }
        guard let consumedAt = found.first else { return .unknown }
        return consumedAt == nil ? .expired : .alreadyUsed
    }

    // MARK: - Identity tokens

    func recordIdentityTokenUse(tokenHash: String, tokenExpiresAt: Date, expiresAt: Date, now: Date) throws -> Bool {
        let use = try TokenUse(tokenHash: tokenHash, tokenExpiresAt: tokenExpiresAt, expiresAt: expiresAt, now: now)
        return try run(TokenUse.table.single(for: dialect), try TokenUse.table.values(use)) == 1
    }

    func recordIdentityTokenUse(tokenHash: String, tokenExpiresAt: Date, expiresAt: Date, now: Date,
                                otherwise refusal: any Error) throws {
        try connection.send(try TokenUse(tokenHash: tokenHash, tokenExpiresAt: tokenExpiresAt, expiresAt: expiresAt, now: now),
                            requiring: ChangeRequirement(rows: 1, refusal: refusal))
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
        let mapping = TableMapping.refreshTokens
        let rotated = try query(SQLStatements.rotateRefreshToken, [.date(now), .text(tokenHash)]) { try mapping.decode($0) }
        if let token = rotated.first {
            return .rotated(token)
        }
        if let token = try select(mapping, " WHERE token_hash = $1", [.text(tokenHash)]).first {
            // Reuse wins over expiry: a rotated token presented again is a replay either way.
            return token.rotatedAt == nil ? .expired : .reused(token)
        }
        let revoked = try query(SQLStatements.revokedRefreshToken, [.text(tokenHash)]) {
            (token: try mapping.decode($0), forReuse: try $0.bool("revoked_for_reuse"))
        }
        guard let tombstone = revoked.first else { return .unknown }
        return tombstone.forReuse ? .reused(tombstone.token) : .revoked(tombstone.token)
    }

    func revokeRefreshFamily(_ familyID: String, becauseReused: Bool) throws -> Int {
        try run(SQLStatements.keepRevokedFamily, [.text(familyID), .bool(becauseReused)])
        let sessionIDHashes = try query("DELETE FROM refresh_tokens WHERE family_id = $1 RETURNING session_id_hash",
                                        [.text(familyID)]) { try $0.requiredText("session_id_hash") }
        for idHash in Set(sessionIDHashes) {
            try run("DELETE FROM sessions WHERE id_hash = $1", [.text(idHash)])
        }
        return sessionIDHashes.count
    }
}

extension SQLStatements {
    static let rotateRefreshToken = """
        UPDATE refresh_tokens SET rotated_at = $1
        WHERE token_hash = $2 AND rotated_at IS NULL AND expires_at > $1
          AND EXISTS (SELECT 1 FROM sessions
                      WHERE sessions.id_hash = refresh_tokens.session_id_hash AND sessions.expires_at > $1)
        RETURNING \(TableMapping.refreshTokens.columnList)
        """

    /// `revoked_refresh_tokens` has the columns of `refresh_tokens`.
    static let revokedRefreshToken = """
        SELECT \(TableMapping.refreshTokens.columnList), revoked_for_reuse FROM revoked_refresh_tokens WHERE token_hash = $1
        """

    static let keepRevokedFamily = """
        INSERT INTO revoked_refresh_tokens (\(TableMapping.refreshTokens.columnList), revoked_for_reuse)
        SELECT \(TableMapping.refreshTokens.columnList), $2 FROM refresh_tokens WHERE family_id = $1
        ON CONFLICT (token_hash) DO NOTHING
        """
}
