import Foundation

extension SQLTransaction {
    // MARK: - Moving the app to another Apple developer team

    func membersAwaitingTransferExport(targetTeam: String, afterUserID: Int64, limit: Int) throws -> [User] {
        try query(SQLStatements.membersAwaitingTransferExport, [.text(targetTeam), .integer(afterUserID),
                                                                 .integer(Int64(max(0, limit)))]) {
            try TableMapping.users.decode($0)
        }
    }

    func recordTransferExport(userID: Int64, transferSub: String, targetTeam: String, now: Date) throws {
        try StoreInput.validateTransfer(transferSub, targetTeam)
        try run("""
            INSERT INTO member_transfers (user_id, transfer_sub, target_team, exported_at) VALUES ($1, $2, $3, $4)
            ON CONFLICT (user_id) DO UPDATE SET transfer_sub = excluded.transfer_sub, target_team = excluded.target_team,
                exported_at = excluded.exported_at, imported_at = NULL, new_sub = NULL, import_failure = NULL
            """, [.integer(userID), .text(transferSub), .text(targetTeam), .date(now)])
    }

    func memberTransfer(userID: Int64) throws -> MemberTransfer? {
        try select(.memberTransfers, " WHERE user_id = $1", [.integer(userID)]).first
    }

    func transferCounts(targetTeam: String?) throws -> TransferCounts {
        let team = targetTeam == nil ? "" : " WHERE target_team = $1"
        let counts = try query("""
            SELECT COUNT(*) AS exported, COUNT(imported_at) AS imported FROM member_transfers\(team)
            """, targetTeam.map { [.text($0)] } ?? []) {
            (exported: Int(try $0.requiredInteger("exported")), imported: Int(try $0.requiredInteger("imported")))
        }.first ?? (0, 0)
        return TransferCounts(members: try countUsers(), exported: counts.exported, imported: counts.imported)
    }

    func pendingTransferImports(afterUserID: Int64, limit: Int) throws -> [MemberTransfer] {
        try select(.memberTransfers, " WHERE imported_at IS NULL AND user_id > $1 ORDER BY user_id LIMIT $2",
                   [.integer(afterUserID), .integer(Int64(max(0, limit)))])
    }

    func completeTransferImport(userID: Int64, transferSub: String, migrated: AppleUserProfile,
                                now: Date) throws -> TransferImportOutcome {
        try StoreInput.validate(migrated)
        guard let pending = try select(.memberTransfers, " WHERE user_id = $1 AND transfer_sub = $2 AND imported_at IS NULL",
                                       [.integer(userID), .text(transferSub)]).first,
              let member = try user(id: pending.userID)
        else { return .notPending }
        return try move(member, to: migrated, now: now)
    }

    func recordTransferImportFailure(userID: Int64, failure: String) throws {
        try run("UPDATE member_transfers SET import_failure = $1 WHERE user_id = $2 AND imported_at IS NULL",
                [.text(failure), .integer(userID)])
    }

    /// The member a token's `transfer_sub` claim names, moved to the token's `sub`; nil when no transfer waits
    /// under that identifier for the profile's team (a transfer identifier is issued for one recipient team), or
    /// the new `sub` already belongs to someone.
    func memberMovedByTransferClaim(_ profile: AppleUserProfile, now: Date) throws -> User? {
        guard let transferSub = profile.transferSub, let team = profile.transferTeam,
              let pending = try select(.memberTransfers, " WHERE transfer_sub = $1 AND target_team = $2 AND imported_at IS NULL",
                                       [.text(transferSub), .text(team)]).first,
              let member = try user(id: pending.userID),
              case let .moved(moved) = try move(member, to: profile, now: now)
        else { return nil }
        return moved
    }

    /// Gives `member` the new team's `sub` (and the email Apple shares with that team, when it says one), and marks
    /// the transfer done. Id, sessions, tokens and every other row of the member stay as they are.
    private func move(_ member: User, to profile: AppleUserProfile, now: Date) throws -> TransferImportOutcome {
        if let holder = try user(provider: User.appleProvider, providerUserID: profile.sub), holder.id != member.id {
            try recordTransferImportFailure(userID: member.id, failure: "sub_taken")
            return .subTaken(byUserID: holder.id)
        }
        var moved = member.applyingSignIn(AppleUserProfile(sub: profile.sub, email: profile.email,
                                                           emailVerified: profile.emailVerified,
                                                           isPrivateEmail: profile.isPrivateEmail, displayName: nil),
                                          now: now)
        moved.providerUserID = profile.sub
        moved.updatedAt = now
        try run("""
            UPDATE users SET provider_user_id = $1, email = $2, is_private_email = $3, email_verified = $4, updated_at = $5
            WHERE id = $6
            """,
            [.text(moved.providerUserID), .optionalText(moved.email), .bool(moved.isPrivateEmail),
             .bool(moved.emailVerified), .date(moved.updatedAt), .integer(moved.id)])
        try run("""
            UPDATE member_transfers SET imported_at = $1, new_sub = $2, import_failure = NULL WHERE user_id = $3
            """, [.date(now), .text(profile.sub), .integer(member.id)])
        moved.updatedAt = StoredTime.date(fromUnixSeconds: try StoredTime.unixSeconds(now))
        return .moved(moved)
    }
}

extension SQLStatements {
    /// Members without a transfer identifier for the team, in id order from a cursor, so that a run passes each once
    /// even when some fail.
    static let membersAwaitingTransferExport = """
        SELECT \(TableMapping.users.selectList()) FROM users
        LEFT JOIN member_transfers ON member_transfers.user_id = users.id AND member_transfers.target_team = $1
        WHERE member_transfers.user_id IS NULL AND users.id > $2 ORDER BY users.id LIMIT $3
        """
}
