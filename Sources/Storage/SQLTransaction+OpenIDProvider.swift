import Foundation

extension SQLTransaction {
    // MARK: - Signing keys

    func insertProviderSigningKey(_ key: ProviderSigningKeyRecord) throws {
        try run("""
            INSERT INTO provider_signing_keys (kid, public_jwk, sealed_private_key, created_at, retired_at)
            VALUES ($1, $2, $3, $4, $5)
            """, [.text(key.keyID), .text(key.publicJWK), .blob(key.sealedPrivateKey), .date(key.createdAt),
                  .optionalDate(key.retiredAt)])
    }

    func providerSigningKeys() throws -> [ProviderSigningKeyRecord] {
        try select(.providerSigningKeys, " ORDER BY created_at, kid", [])
    }

    func retireProviderSigningKeys(except keyID: String, now: Date) throws -> Int {
        try run("UPDATE provider_signing_keys SET retired_at = $1 WHERE kid <> $2 AND retired_at IS NULL",
                [.date(now), .text(keyID)])
    }

    // MARK: - Authorization requests

    func insertProviderAuthorization(_ authorization: ProviderAuthorization) throws {
        try run("""
            INSERT INTO provider_authorizations (state_hash, client_id, redirect_uri, client_state, nonce, code_challenge,
                                                 scope, created_at, response_mode)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
            """, [.text(authorization.stateHash), .text(authorization.clientID), .text(authorization.redirectURI),
                  .optionalText(authorization.clientState), .optionalText(authorization.nonce),
                  .optionalText(authorization.codeChallenge), .text(authorization.scope), .date(authorization.createdAt),
                  .text(authorization.responseMode)])
    }

    func providerAuthorization(stateHash: String) throws -> ProviderAuthorization? {
        try select(.providerAuthorizations, " WHERE state_hash = $1", [.text(stateHash)]).first
    }

    // MARK: - Authorization codes

    func insertAuthorizationCode(_ code: AuthorizationCodeRecord) throws {
        try run("DELETE FROM authorization_codes WHERE expires_at <= $1", [.date(code.createdAt.addingTimeInterval(-3600))])
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
        let mapping = TableMapping.authorizationCodes
        let redeemed = try query(SQLStatements.redeemAuthorizationCode, [.date(now), .text(codeHash)]) {
            try mapping.decode($0)
        }
        if let code = redeemed.first { return .redeemed(code) }
        guard let code = try select(mapping, " WHERE code_hash = $1", [.text(codeHash)]).first else { return .unknown }
        return code.redeemedAt == nil ? .expired : .replayed(code)
    }

    func setAuthorizationCodeFamily(codeHash: String, familyID: String) throws {
        try run("UPDATE authorization_codes SET family_id = $1 WHERE code_hash = $2", [.text(familyID), .text(codeHash)])
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
        try select(.providerGrants, " WHERE family_id = $1", [.text(familyID)]).first
    }

    func refreshTokenFamily(tokenHash: String) throws -> String? {
        try query("SELECT family_id FROM refresh_tokens WHERE token_hash = $1", [.text(tokenHash)]) {
            try $0.requiredText("family_id")
        }.first
    }
}

extension SQLStatements {
    static let redeemAuthorizationCode = """
        UPDATE authorization_codes SET redeemed_at = $1
        WHERE code_hash = $2 AND redeemed_at IS NULL AND expires_at > $1
        RETURNING \(TableMapping.authorizationCodes.columnList)
        """
}
