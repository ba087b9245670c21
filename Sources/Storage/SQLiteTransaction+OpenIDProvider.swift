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
            ProviderSigningKeyRecord(keyID: try row.requiredText("kid"), publicJWK: try row.requiredText("public_jwk"),
                                     sealedPrivateKey: try row.requiredBlob("sealed_private_key"),
                                     createdAt: try row.date("created_at"), retiredAt: try row.optionalDate("retired_at"))
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
        let mapping = TableMapping.providerAuthorizations
        return try connection.query("SELECT \(mapping.columnList) FROM provider_authorizations WHERE state_hash = ?",
                                    [.text(stateHash)]) { try mapping.decode($0) }.first
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

    private static func decodeCode(_ row: SQLiteRow) throws -> AuthorizationCodeRecord {
        AuthorizationCodeRecord(codeHash: try row.requiredText("code_hash"), clientID: try row.requiredText("client_id"),
                                redirectURI: try row.requiredText("redirect_uri"),
                                codeChallenge: try row.text("code_challenge"), scope: try row.requiredText("scope"),
                                nonce: try row.text("nonce"), userID: try row.requiredInteger("user_id"),
                                authTime: try row.date("auth_time"), createdAt: try row.date("created_at"),
                                expiresAt: try row.date("expires_at"), redeemedAt: try row.optionalDate("redeemed_at"),
                                familyID: try row.text("family_id"))
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
            ProviderGrant(familyID: try row.requiredText("family_id"), clientID: try row.requiredText("client_id"),
                          userID: try row.requiredInteger("user_id"), scope: try row.requiredText("scope"),
                          authTime: try row.date("auth_time"), createdAt: try row.date("created_at"))
        }.first
    }

    func refreshTokenFamily(tokenHash: String) throws -> String? {
        try connection.query("SELECT family_id FROM refresh_tokens WHERE token_hash = ?", [.text(tokenHash)]) {
            try $0.requiredText("family_id")
        }.first
    }
}
