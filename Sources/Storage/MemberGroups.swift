import Foundation

/// A group a member belongs to (what forward auth's `?group=` asks about), joined through an invitation or given
/// by `members groups --add`.
public struct MemberGroup: Sendable, Equatable {
    public var userID: Int64
    public var name: String
    public var joinedAt: Date

    public init(userID: Int64, name: String, joinedAt: Date) {
        self.userID = userID
        self.name = name
        self.joinedAt = joinedAt
    }
}

/// A single-use invitation into a group, kept by the digest of its token; it names no member.
public struct GroupInvitation: Sendable, Equatable {
    public var tokenHash: String
    public var groupName: String
    public var createdAt: Date
    public var expiresAt: Date
    /// When a sign-in spent it; nil while it waits.
    public var redeemedAt: Date?

    public init(tokenHash: String, groupName: String, createdAt: Date, expiresAt: Date, redeemedAt: Date? = nil) {
        self.tokenHash = tokenHash
        self.groupName = groupName
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.redeemedAt = redeemedAt
    }
}

/// What `redeemGroupInvitation` did.
public enum InvitationRedemption: Sendable, Equatable {
    /// The invitation was spent now, and the member is in the group.
    case joined(group: String)
    /// No invitation has that digest (never made, or swept after it expired).
    case unknown
    case expired
    /// Spent before, by this member or another.
    case alreadyUsed
}

/// Member groups and invitations. Every backend implements these with the same semantics as the rest of
/// `StoreTransaction` (whole unix seconds; expired means `expiresAt <= now`).
public protocol MemberGroupsTransaction {
    /// The member's groups, in byte order of their names.
    func groups(userID: Int64) throws -> [MemberGroup]
    /// True when the member was not in the group yet.
    @discardableResult func addGroup(userID: Int64, group: String, now: Date) throws -> Bool
    /// True when the member was in the group.
    @discardableResult func removeGroup(userID: Int64, group: String) throws -> Bool
    func insertGroupInvitation(_ invitation: GroupInvitation) throws
    func groupInvitation(tokenHash: String) throws -> GroupInvitation?
    /// Atomic: of concurrent callers, exactly one spends a waiting, unexpired invitation, and its member joins the
    /// group in the same transaction. Every other caller changes nothing.
    func redeemGroupInvitation(tokenHash: String, userID: Int64, now: Date) throws -> InvitationRedemption
}
