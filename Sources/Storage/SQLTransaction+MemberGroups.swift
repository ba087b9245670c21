import Foundation

extension SQLTransaction {
    // MARK: - Member groups and invitations

    func groups(userID: Int64) throws -> [MemberGroup] {
        try select(.memberGroups, " WHERE user_id = $1 ORDER BY group_name", [.integer(userID)])
    }

    func addGroup(userID: Int64, group: String, now: Date) throws -> Bool {
        try StoreInput.validateGroupName(group)
        return try run("""
            INSERT INTO member_groups (user_id, group_name, joined_at) VALUES ($1, $2, $3)
            ON CONFLICT (user_id, group_name) DO NOTHING
            """, [.integer(userID), .text(group), .date(now)]) == 1
    }

    func removeGroup(userID: Int64, group: String) throws -> Bool {
        try run("DELETE FROM member_groups WHERE user_id = $1 AND group_name = $2", [.integer(userID), .text(group)]) == 1
    }

    func insertGroupInvitation(_ invitation: GroupInvitation) throws {
        try StoreInput.validateGroupName(invitation.groupName)
        try run("""
            INSERT INTO group_invitations (token_hash, group_name, created_at, expires_at, redeemed_at)
            VALUES ($1, $2, $3, $4, $5)
            """, [.text(invitation.tokenHash), .text(invitation.groupName), .date(invitation.createdAt),
                  .date(invitation.expiresAt), .optionalDate(invitation.redeemedAt)])
    }

    func groupInvitation(tokenHash: String) throws -> GroupInvitation? {
        try select(.groupInvitations, " WHERE token_hash = $1", [.text(tokenHash)]).first
    }

    func redeemGroupInvitation(tokenHash: String, userID: Int64, now: Date) throws -> InvitationRedemption {
        // One conditional update spends it: a concurrent redemption waits for this row and then finds it spent.
        let spent = try query("""
            UPDATE group_invitations SET redeemed_at = $1
            WHERE token_hash = $2 AND redeemed_at IS NULL AND expires_at > $1
            RETURNING group_name
            """, [.date(now), .text(tokenHash)]) { try $0.requiredText("group_name") }
        if let group = spent.first {
            _ = try addGroup(userID: userID, group: group, now: now)
            return .joined(group: group)
        }
        guard let invitation = try groupInvitation(tokenHash: tokenHash) else { return .unknown }
        return invitation.redeemedAt == nil ? .expired : .alreadyUsed
    }
}
