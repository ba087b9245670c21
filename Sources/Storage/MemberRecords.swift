import Foundation

/// Everything the store holds that names one member, read in one snapshot for an access request (`members export`).
/// The secrets in it are as stored (digests, sealed bytes): what of them an export may show is the caller's rule.
public struct MemberRecords: Sendable {
    public var user: User
    /// Expired sessions not yet swept included.
    public var sessions: [Session]
    /// Every refresh token of the member's live families, rotated ones included.
    public var refreshTokens: [RefreshToken]
    /// The tokens of revoked families, kept until they expire.
    public var revokedRefreshTokens: [RevokedRefreshToken]
    public var appleToken: AppleTokenRecord?
    public var providerGrants: [ProviderGrant]
    public var authorizationCodes: [AuthorizationCodeRecord]
    /// The member's part in moving the app to another Apple developer team, if an export recorded one.
    public var transfer: MemberTransfer?
    /// The groups the member is in (forward auth).
    public var groups: [MemberGroup]

    public init(user: User, sessions: [Session], refreshTokens: [RefreshToken], revokedRefreshTokens: [RevokedRefreshToken],
                appleToken: AppleTokenRecord?, providerGrants: [ProviderGrant], authorizationCodes: [AuthorizationCodeRecord],
                transfer: MemberTransfer? = nil, groups: [MemberGroup] = []) {
        self.user = user
        self.sessions = sessions
        self.refreshTokens = refreshTokens
        self.revokedRefreshTokens = revokedRefreshTokens
        self.appleToken = appleToken
        self.providerGrants = providerGrants
        self.authorizationCodes = authorizationCodes
        self.transfer = transfer
        self.groups = groups
    }

    /// The tables `memberRecords(userID:)` reads and, for each, the columns it reads. A test holds the schema to it:
    /// every table with a `user_id` column, and every column of those tables and of `users`, must be here, so a new
    /// kind of member data cannot be left out of the export unnoticed.
    package static let columnsRead: [String: [String]] = [
        TableMapping.users.table: TableMapping.users.columns,
        TableMapping.sessions.table: TableMapping.sessions.columns,
        TableMapping.refreshTokens.table: TableMapping.refreshTokens.columns,
        "revoked_refresh_tokens": TableMapping.refreshTokens.columns + ["revoked_for_reuse"],
        TableMapping.appleTokens.table: TableMapping.appleTokens.columns,
        TableMapping.providerGrants.table: TableMapping.providerGrants.columns,
        TableMapping.authorizationCodes.table: TableMapping.authorizationCodes.columns,
        TableMapping.memberTransfers.table: TableMapping.memberTransfers.columns,
        TableMapping.memberGroups.table: TableMapping.memberGroups.columns,
    ]
}

/// A token of a refresh-token family that was revoked, kept as a tombstone until it expires.
public struct RevokedRefreshToken: Sendable, Equatable {
    public var token: RefreshToken
    /// True when the family was revoked because a token was presented twice; false when a client revoked it or a
    /// replayed authorization code did.
    public var revokedForReuse: Bool

    public init(token: RefreshToken, revokedForReuse: Bool) {
        self.token = token
        self.revokedForReuse = revokedForReuse
    }
}

extension StoreTransaction {
    /// Nil when there is no such member. Run it inside `Store.read`, so that every part is from one snapshot.
    public func memberRecords(userID: Int64) throws -> MemberRecords? {
        guard let user = try user(id: userID) else { return nil }
        return MemberRecords(user: user, sessions: try sessions(userID: userID),
                             refreshTokens: try refreshTokens(userID: userID),
                             revokedRefreshTokens: try revokedRefreshTokens(userID: userID),
                             appleToken: try appleToken(userID: userID),
                             providerGrants: try providerGrants(userID: userID),
                             authorizationCodes: try authorizationCodes(userID: userID),
                             transfer: try memberTransfer(userID: userID), groups: try groups(userID: userID))
    }
}
