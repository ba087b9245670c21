import Foundation
import Testing
@testable import Storage

extension StoreBehaviour {
    /// What `members find` and `members export` read.
    @Suite("Member records") struct MemberRecordsBehaviour {
        @Test("users(email:) finds every member with the address, ASCII case aside, and no other",
              arguments: Backend.allCases)
        func usersByEmail(backend: Backend) throws {
            try withFreshStore(backend) { fixture in
                let store = fixture.store
                let (one, two) = try store.write { tx in
                    (try tx.upsertAppleUser(appleProfile(sub: "sub-1", email: "same@example.com"), now: t0).user,
                     try tx.upsertAppleUser(appleProfile(sub: "sub-2", email: "Same@Example.com"), now: t0).user)
                }
                _ = try store.write { try $0.upsertAppleUser(appleProfile(sub: "sub-3", email: "other@example.com"), now: t0) }
                _ = try store.write { try $0.upsertAppleUser(appleProfile(sub: "sub-4", email: "ädа@example.com"), now: t0) }
                #expect(try store.read { try $0.users(email: "SAME@example.COM") }.map(\.id) == [one.id, two.id])
                #expect(try store.read { try $0.users(email: "same@example.co") }.isEmpty)
                #expect(try store.read { try $0.users(email: "%@example.com") }.isEmpty)
                // Only ASCII is folded, on PostgreSQL as on SQLite.
                #expect(try store.read { try $0.users(email: "ÄDА@example.com") }.isEmpty)
                #expect(try store.read { try $0.users(email: "ädа@example.com") }.count == 1)
            }
        }

        @Test("memberRecords reads the member's sessions, refresh tokens live and revoked, Apple token, grants and codes — and nothing of another member",
              arguments: Backend.allCases)
        func everythingOfOneMember(backend: Backend) throws {
            try withFreshStore(backend) { fixture in
                let store = fixture.store
                let member = try seedMember(sub: "member", in: store)
                let other = try seedMember(sub: "other", in: store)
                let records = try #require(try store.read { try $0.memberRecords(userID: member.id) })
                #expect(records.user == member)
                #expect(records.sessions.map(\.idHash) == ["member-web", "member-app", "member-client"])
                #expect(records.refreshTokens.map(\.tokenHash) == ["member-app-1", "member-client-1", "member-app-2"])
                #expect(records.refreshTokens.first?.rotatedAt == t0 + 60)
                #expect(records.revokedRefreshTokens.map(\.token.tokenHash) == ["member-gone-1"])
                #expect(records.revokedRefreshTokens.first?.revokedForReuse == false)
                #expect(records.appleToken?.clientID == "com.example.web")
                #expect(records.providerGrants.map(\.familyID) == ["member-client-family"])
                #expect(records.authorizationCodes.map(\.codeHash) == ["member-code"])
                let otherRecords = try #require(try store.read { try $0.memberRecords(userID: other.id) })
                #expect(otherRecords.sessions.map(\.idHash) == ["other-web", "other-app", "other-client"])
                #expect(try store.read { try $0.memberRecords(userID: other.id + 1) } == nil)
            }
        }

        /// What `seedMember` stores: a browser session, an app session whose refresh token rotated once, an OpenID
        /// client's session with a grant and a code, a family a client revoked, and an Apple token.
        func seedMember(sub: String, in store: any Store) throws -> User {
            try store.write { tx in
                let user = try tx.upsertAppleUser(appleProfile(sub: sub, email: "\(sub)@example.com"), now: t0).user
                for (offset, name) in ["web", "app", "client", "gone"].enumerated() {
                    try tx.insertSession(Session(idHash: "\(sub)-\(name)", userID: user.id, flow: name == "web" ? "web" : "api",
                                                 nonceVerified: true, createdAt: t0 + Double(offset), expiresAt: t0 + 86_400))
                }
                for (hash, family, session, created) in [("app-1", "app", "app", 1.0), ("app-2", "app", "app", 60),
                                                         ("client-1", "client", "client", 2), ("gone-1", "gone", "gone", 3)] {
                    try tx.insertRefreshToken(RefreshToken(tokenHash: "\(sub)-\(hash)", familyID: "\(sub)-\(family)-family",
                                                           sessionIDHash: "\(sub)-\(session)", userID: user.id,
                                                           createdAt: t0 + created, expiresAt: t0 + 86_400))
                }
                #expect(try tx.rotateRefreshToken(tokenHash: "\(sub)-app-1", now: t0 + 60) != .unknown)
                try tx.revokeRefreshFamily("\(sub)-gone-family", becauseReused: false)
                try tx.upsertAppleToken(AppleTokenRecord(userID: user.id, clientID: "com.example.web",
                                                         encryptedRefreshToken: [1, 2, 3], updatedAt: t0))
                try tx.insertProviderGrant(ProviderGrant(familyID: "\(sub)-client-family", clientID: "client-a",
                                                         userID: user.id, scope: "openid", authTime: t0, createdAt: t0 + 2))
                try tx.insertAuthorizationCode(AuthorizationCodeRecord(
                    codeHash: "\(sub)-code", clientID: "client-a", redirectURI: "https://rp.example/cb", codeChallenge: nil,
                    scope: "openid", nonce: nil, userID: user.id, authTime: t0, createdAt: t0, expiresAt: t0 + 60))
                return user
            }
        }
    }
}

/// The export must know every kind of member data the schema holds: `MemberRecords.columnsRead` is held to the
/// migrated schema, so a migration that adds a table keyed by `user_id`, or a column to one of them, fails here until
/// `memberRecords` reads it and the export decides what to show of it (`Sources/OperatorCommands/MemberExport.swift`).
@Suite("Member data in the schema") struct MemberDataSchemaTests {
    @Test("every table with a user_id column, and every column of it and of users, is read for a member's export",
          arguments: Backend.allCases)
    func exportKnowsEveryMemberTable(backend: Backend) throws {
        try withFreshStore(backend) { fixture in
            let schema = try fixture.database.schema()
            #expect(schema.tables["sessions"] != nil, "introspection sees the schema")
            let unread = Self.memberDataNotRead(schema)
            #expect(unread.isEmpty, "member data the export does not read:\n\(unread.joined(separator: "\n"))")
        }
    }

    @Test("the check finds a new table keyed by user_id and a new column of a member table")
    func checkFindsWhatIsMissing() throws {
        try withFreshStore(.sqlite) { fixture in
            var schema = try fixture.database.schema()
            schema.tables["member_notes"] = .init(columns: [.init(name: "user_id", notNull: true), .init(name: "note", notNull: false)])
            schema.tables["sessions"]?.columns.append(.init(name: "user_agent", notNull: false))
            #expect(Self.memberDataNotRead(schema) == ["table member_notes", "column sessions.user_agent"])
        }
    }

    /// One line per table with a `user_id` column that `memberRecords` does not read, and per column of a member
    /// table it does not read (or reads and the schema lacks).
    static func memberDataNotRead(_ schema: DatabaseSchema) -> [String] {
        var lines: [String] = []
        for (name, table) in schema.tables.sorted(by: { $0.key < $1.key }) {
            let columns = Set(table.columns.map(\.name))
            guard name == "users" || columns.contains("user_id") else { continue }
            guard let read = MemberRecords.columnsRead[name] else {
                lines.append("table \(name)")
                continue
            }
            lines += columns.symmetricDifference(read).sorted().map { "column \(name).\($0)" }
        }
        lines += Set(MemberRecords.columnsRead.keys).subtracting(schema.tables.keys).sorted().map { "table \($0) (not in the schema)" }
        return lines
    }
}
