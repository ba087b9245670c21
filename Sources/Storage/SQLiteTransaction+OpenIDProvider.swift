import Foundation

extension SQLiteTransaction {
    // MARK: - Signing keys

    func insertProviderSigningKey(_ key: ProviderSigningKeyRecord) throws {
        try connection.run("""
            INSERT INTO provider_signing_keys (kid, public_jwk, sealed_private_key, created_at, retired_at)
            VALUES (?, ?, ?, ?, ?)
            """, [.text(key.keyID), .text(key.publicJWK), .blob(key.sealedPrivateKey), .date(key.createdAt),
                  .optionalDate(key.retiredAt)])
    }

    func providerSigningKeys() throws -> [ProviderSigningKeyRecord] {
        try connection.query("""
            SELECT kid, public_jwk, sealed_private_key, created_at, retired_at
            FROM provider_signing_keys ORDER BY created_at, kid
            """) { row in
            ProviderSigningKeyRecord(keyID: row.text(0), publicJWK: row.text(1), sealedPrivateKey: row.blob(2),
                                     createdAt: row.date(3), retiredAt: row.optionalDate(4))
        }
    }

    func retireProviderSigningKeys(except keyID: String, now: Date) throws -> Int {
        try connection.run("UPDATE provider_signing_keys SET retired_at = ? WHERE kid <> ? AND retired_at IS NULL",
                           [.date(now), .text(keyID)])
    }

    // MARK: - Authorization requests

    func insertProviderAuthorization(_ authorization: ProviderAuthorization) throws {
        try connection.run("""
            INSERT INTO provider_authorizations (state_hash, client_id, redirect_uri, client_state, nonce, code_challenge,
                                                 scope, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """, [.text(authorization.stateHash), .text(authorization.clientID), .text(authorization.redirectURI),
                  .optionalText(authorization.clientState), .optionalText(authorization.nonce),
                  .optionalText(authorization.codeChallenge), .text(authorization.scope), .date(authorization.createdAt)])
    }

    func providerAuthorization(stateHash: String) throws -> ProviderAuthorization? {
        try connection.query("""
            SELECT state_hash, client_id, redirect_uri, client_state, nonce, code_challenge, scope, created_at
            FROM provider_authorizations WHERE state_hash = ?
            """, [.text(stateHash)]) { row in
            ProviderAuthorization(stateHash: row.text(0), clientID: row.text(1), redirectURI: row.text(2),
                                  clientState: row.optionalText(3), nonce: row.optionalText(4),
                                  codeChallenge: row.optionalText(5), scope: row.text(6), createdAt: row.date(7))
        }.first
    }

    // MARK: - Authorization codes

    func insertAuthorizationCode(_ code: AuthorizationCodeRecord) throws {
        try connection.run("DELETE FROM authorization_codes WHERE expires_at <= ?",
                           [.date(code.createdAt.addingTimeInterval(-3600))])
        try connection.run("""
            INSERT INTO authorization_codes (code_hash, client_id, redirect_uri, code_challenge, scope, nonce, user_id,
                                             auth_time, created_at, expires_at, redeemed_at, family_id)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [.text(code.codeHash), .text(code.clientID), .text(code.redirectURI), .optionalText(code.codeChallenge),
                  .text(code.scope), .optionalText(code.nonce), .integer(code.userID), .date(code.authTime),
                  .date(code.createdAt), .date(code.expiresAt), .optionalDate(code.redeemedAt),
                  .optionalText(code.familyID)])
    }

    func redeemAuthorizationCode(codeHash: String, now: Date) throws -> CodeRedemption {
        let redeemed = try connection.query("""
            UPDATE authorization_codes SET redeemed_at = ?1
            WHERE code_hash = ?2 AND redeemed_at IS NULL AND expires_at > ?1
            RETURNING \(Self.codeColumns)
            """, [.date(now), .text(codeHash)], Self.decodeCode)
        if let code = redeemed.first { return .redeemed(code) }
        let found = try connection.query("SELECT \(Self.codeColumns) FROM authorization_codes WHERE code_hash = ?",
                                         [.text(codeHash)], Self.decodeCode)
        guard let code = found.first else { return .unknown }
        return code.redeemedAt == nil ? .expired : .replayed(code)
    }

    func setAuthorizationCodeFamily(codeHash: String, familyID: String) throws {
        try connection.run("UPDATE authorization_codes SET family_id = ? WHERE code_hash = ?",
                           [.text(familyID), .text(codeHash)])
    }

    private static let codeColumns = """
        code_hash, client_id, redirect_uri, code_challenge, scope, nonce, user_id, auth_time, created_at, expires_at,
        redeemed_at, family_id
        """

    private static func decodeCode(_ row: SQLiteRow) -> AuthorizationCodeRecord {
        AuthorizationCodeRecord(codeHash: row.text(0), clientID: row.text(1), redirectURI: row.text(2),
                                codeChallenge: row.optionalText(3), scope: row.text(4), nonce: row.optionalText(5),
                                userID: row.int64(6), authTime: row.date(7), createdAt: row.date(8),
                                expiresAt: row.date(9), redeemedAt: row.optionalDate(10), familyID: row.optionalText(11))
    }

    // MARK: - Grants

    func insertProviderGrant(_ grant: ProviderGrant) throws {
        try connection.run("""
            INSERT INTO provider_grants (family_id, client_id, user_id, scope, auth_time, created_at)
            VALUES (?, ?, ?, ?, ?, ?)
            """, [.text(grant.familyID), .text(grant.clientID), .integer(grant.userID), .text(grant.scope),
                  .date(grant.authTime), .date(grant.createdAt)])
    }

    func providerGrant(familyID: String) throws -> ProviderGrant? {
        try connection.query("""
            SELECT family_id, client_id, user_id, scope, auth_time, created_at FROM provider_grants WHERE family_id = ?
            """, [.text(familyID)]) { row in
            ProviderGrant(familyID: row.text(0), clientID: row.text(1), userID: row.int64(2), scope: row.text(3),
                          authTime: row.date(4), createdAt: row.date(5))
        }.first
    }

    func refreshTokenFamily(tokenHash: String) throws -> String? {
        try connection.query("SELECT family_id FROM refresh_tokens WHERE token_hash = ?", [.text(tokenHash)]) {
            $0.text(0)
        }.first
    }
}
