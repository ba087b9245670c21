import Foundation

extension PostgresTransaction {
    // MARK: - Signing keys

    func insertProviderSigningKey(_ key: ProviderSigningKeyRecord) throws {
        try run("""
            INSERT INTO provider_signing_keys (kid, public_jwk, sealed_private_key, created_at, retired_at)
            VALUES ($1, $2, $3, $4, $5)
            """, [.text(key.keyID), .text(key.publicJWK), .blob(key.sealedPrivateKey), .date(key.createdAt),
                  .optionalDate(key.retiredAt)])
    }

    func providerSigningKeys() throws -> [ProviderSigningKeyRecord] {
        try query("""
            SELECT kid, public_jwk, sealed_private_key, created_at, retired_at
            FROM provider_signing_keys ORDER BY created_at, kid
            """) { row in
            ProviderSigningKeyRecord(keyID: row.text("kid"), publicJWK: row.text("public_jwk"),
                                     sealedPrivateKey: row.blob("sealed_private_key"), createdAt: row.date("created_at"),
                                     retiredAt: row.optionalDate("retired_at"))
        }
    }

    func retireProviderSigningKeys(except keyID: String, now: Date) throws -> Int {
        try run("UPDATE provider_signing_keys SET retired_at = $1 WHERE kid <> $2 AND retired_at IS NULL",
                           [.date(now), .text(keyID)])
    }

    // MARK: - Authorization requests

    func insertProviderAuthorization(_ authorization: ProviderAuthorization) throws {
        try run("""
            INSERT INTO provider_authorizations (state_hash, client_id, redirect_uri, client_state, nonce, code_challenge,
                                                 scope, created_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
            """, [.text(authorization.stateHash), .text(authorization.clientID), .text(authorization.redirectURI),
                  .optionalText(authorization.clientState), .optionalText(authorization.nonce),
                  .optionalText(authorization.codeChallenge), .text(authorization.scope), .date(authorization.createdAt)])
    }

    func providerAuthorization(stateHash: String) throws -> ProviderAuthorization? {
        try query("""
            SELECT state_hash, client_id, redirect_uri, client_state, nonce, code_challenge, scope, created_at
            FROM provider_authorizations WHERE state_hash = $1
            """, [.text(stateHash)]) { Self.decodeProviderAuthorization($0) }.first
    }

    /// `prefix`: the columns' names in a join that renamed them.
    static func decodeProviderAuthorization(_ row: PostgresRow, prefix: String = "") -> ProviderAuthorization {
        ProviderAuthorization(
            stateHash: row.text(prefix + "state_hash"), clientID: row.text(prefix + "client_id"),
            redirectURI: row.text(prefix + "redirect_uri"), clientState: row.optionalText(prefix + "client_state"),
            nonce: row.optionalText(prefix + "nonce"), codeChallenge: row.optionalText(prefix + "code_challenge"),
            scope: row.text(prefix + "scope"), createdAt: row.date(prefix + "created_at"))
    }

    // MARK: - Authorization codes

    func insertAuthorizationCode(_ code: AuthorizationCodeRecord) throws {
        try run("DELETE FROM authorization_codes WHERE expires_at <= $1",
                           [.date(code.createdAt.addingTimeInterval(-3600))])
        try run("""
            INSERT INTO authorization_codes (code_hash, client_id, redirect_uri, code_challenge, scope, nonce, user_id,
                                             auth_time, created_at, expires_at, redeemed_at, family_id)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
            """, [.text(code.codeHash), .text(code.clientID), .text(code.redirectURI), .optionalText(code.codeChallenge),
                  .text(code.scope), .optionalText(code.nonce), .integer(code.userID), .date(code.authTime),
                  .date(code.createdAt), .date(code.expiresAt), .optionalDate(code.redeemedAt),
                  .optionalText(code.familyID)])
    }

    func redeemAuthorizationCode(codeHash: String, now: Date) throws -> CodeRedemption {
        let redeemed = try query("""
            UPDATE authorization_codes SET redeemed_at = $1
            WHERE code_hash = $2 AND redeemed_at IS NULL AND expires_at > $1
            RETURNING \(Self.codeColumns)
            """, [.date(now), .text(codeHash)], Self.decodeCode)
        if let code = redeemed.first { return .redeemed(code) }
        let found = try query("SELECT \(Self.codeColumns) FROM authorization_codes WHERE code_hash = $1",
                                         [.text(codeHash)], Self.decodeCode)
        guard let code = found.first else { return .unknown }
        return code.redeemedAt == nil ? .expired : .replayed(code)
    }

    func setAuthorizationCodeFamily(codeHash: String, familyID: String) throws {
        try run("UPDATE authorization_codes SET family_id = $1 WHERE code_hash = $2",
                           [.text(familyID), .text(codeHash)])
    }

    private static let codeColumns = """
        code_hash, client_id, redirect_uri, code_challenge, scope, nonce, user_id, auth_time, created_at, expires_at,
        redeemed_at, family_id
        """

    private static func decodeCode(_ row: PostgresRow) -> AuthorizationCodeRecord {
        AuthorizationCodeRecord(codeHash: row.text("code_hash"), clientID: row.text("client_id"),
                                redirectURI: row.text("redirect_uri"), codeChallenge: row.optionalText("code_challenge"),
                                scope: row.text("scope"), nonce: row.optionalText("nonce"), userID: row.int64("user_id"),
                                authTime: row.date("auth_time"), createdAt: row.date("created_at"),
                                expiresAt: row.date("expires_at"), redeemedAt: row.optionalDate("redeemed_at"),
                                familyID: row.optionalText("family_id"))
    }

    // MARK: - Grants

    func insertProviderGrant(_ grant: ProviderGrant) throws {
        try run("""
            INSERT INTO provider_grants (family_id, client_id, user_id, scope, auth_time, created_at)
            VALUES ($1, $2, $3, $4, $5, $6)
            """, [.text(grant.familyID), .text(grant.clientID), .integer(grant.userID), .text(grant.scope),
                  .date(grant.authTime), .date(grant.createdAt)])
    }

    func providerGrant(familyID: String) throws -> ProviderGrant? {
        try query("""
            SELECT family_id, client_id, user_id, scope, auth_time, created_at FROM provider_grants WHERE family_id = $1
            """, [.text(familyID)]) { row in
            ProviderGrant(familyID: row.text("family_id"), clientID: row.text("client_id"), userID: row.int64("user_id"),
                          scope: row.text("scope"), authTime: row.date("auth_time"), createdAt: row.date("created_at"))
        }.first
    }

    func refreshTokenFamily(tokenHash: String) throws -> String? {
        try query("SELECT family_id FROM refresh_tokens WHERE token_hash = $1", [.text(tokenHash)]) {
            $0.text("family_id")
        }.first
    }
}
