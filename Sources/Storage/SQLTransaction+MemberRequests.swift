import Foundation

extension SQLTransaction {
    // MARK: - Member requests

    func users(email: String) throws -> [User] {
        // lower() folds ASCII alike on both backends, and on PostgreSQL more than ASCII: the filter keeps the
        // backends' answers the same.
        let wanted = email.asciiLowercased
        return try select(.users, " WHERE lower(email) = lower($1) ORDER BY id", [.text(email)])
            .filter { $0.email?.asciiLowercased == wanted }
    }

    func sessions(userID: Int64) throws -> [Session] {
        try select(.sessions, " WHERE user_id = $1 ORDER BY created_at, id_hash", [.integer(userID)])
    }

    func refreshTokens(userID: Int64) throws -> [RefreshToken] {
        try select(.refreshTokens, " WHERE user_id = $1 ORDER BY created_at, token_hash", [.integer(userID)])
    }

    func revokedRefreshTokens(userID: Int64) throws -> [RevokedRefreshToken] {
        try query(SQLStatements.revokedRefreshTokensOfUser, [.integer(userID)]) { row in
            RevokedRefreshToken(token: try TableMapping.refreshTokens.decode(row),
                                revokedForReuse: try row.bool("revoked_for_reuse"))
        }
    }

    func providerGrants(userID: Int64) throws -> [ProviderGrant] {
        try select(.providerGrants, " WHERE user_id = $1 ORDER BY created_at, family_id", [.integer(userID)])
    }

    func authorizationCodes(userID: Int64) throws -> [AuthorizationCodeRecord] {
        try select(.authorizationCodes, " WHERE user_id = $1 ORDER BY created_at, code_hash", [.integer(userID)])
    }
}

extension String {
    /// A–Z folded to a–z, nothing else.
    fileprivate var asciiLowercased: String {
        String(String.UnicodeScalarView(unicodeScalars.map { scalar in
            ("A"..."Z").contains(scalar) ? Unicode.Scalar(scalar.value + 32)! : scalar
        }))
    }
}

extension SQLStatements {
    static let revokedRefreshTokensOfUser = """
        SELECT \(TableMapping.refreshTokens.columnList), revoked_for_reuse FROM revoked_refresh_tokens
        WHERE user_id = $1 ORDER BY created_at, token_hash
        """
}
