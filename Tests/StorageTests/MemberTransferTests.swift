import Foundation
import Testing
@testable import Storage

extension StoreBehaviour {
    @Suite("Moving members to another Apple team") struct MemberTransfers {
        static let teamB = "TEAMB98765"

        /// Two members with a session each; returns their ids.
        private func twoMembers(_ store: any Store) throws -> (Int64, Int64) {
            try store.write { tx in
                let one = try tx.upsertAppleUser(appleProfile(sub: "old.one", email: "one@privaterelay.appleid.com",
                                                              privateRelay: true, name: "One"), now: t0).user
                let two = try tx.upsertAppleUser(appleProfile(sub: "old.two"), now: t0).user
                try tx.insertSession(session("session-one", userID: one.id, lifetime: 86_400))
                try tx.insertSession(session("session-two", userID: two.id, lifetime: 86_400))
                return (one.id, two.id)
            }
        }

        @Test("export: members with an identifier for the target team are no longer awaiting; another team's is replaced",
              arguments: Backend.allCases)
        func exportIsResumable(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let (one, two) = try twoMembers(store)
                try store.write { try $0.recordTransferExport(userID: one, transferSub: "t.one", targetTeam: "OTHERTEAM1", now: t0) }
                // A transfer identifier for another team does not count for this one.
                #expect(try store.read { try $0.membersAwaitingTransferExport(targetTeam: Self.teamB, afterUserID: 0, limit: 10) }
                    .map(\.id) == [one, two])
                try store.write { try $0.recordTransferExport(userID: one, transferSub: "t.one.b", targetTeam: Self.teamB, now: t0) }
                #expect(try store.read { try $0.membersAwaitingTransferExport(targetTeam: Self.teamB, afterUserID: 0, limit: 10) }
                    .map(\.id) == [two])
                #expect(try store.read { try $0.membersAwaitingTransferExport(targetTeam: Self.teamB, afterUserID: two, limit: 10) }
                    .isEmpty)
                #expect(try store.read { try $0.memberTransfer(userID: one) }
                    == MemberTransfer(userID: one, transferSub: "t.one.b", targetTeam: Self.teamB, exportedAt: t0))
                #expect(try store.read { try $0.transferCounts(targetTeam: Self.teamB) }
                    == TransferCounts(members: 2, exported: 1, imported: 0))
                // One transfer identifier names one member.
                #expect(throws: (any Error).self) {
                    try store.write { try $0.recordTransferExport(userID: two, transferSub: "t.one.b", targetTeam: Self.teamB, now: t0) }
                }
            }
        }

        @Test("import moves the member to the new sub: same id, sessions and name; the new team's email; once only",
              arguments: Backend.allCases)
        func importMovesMember(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let (one, _) = try twoMembers(store)
                try store.write { try $0.recordTransferExport(userID: one, transferSub: "t.one", targetTeam: Self.teamB, now: t0) }
                let migrated = appleProfile(sub: "new.one", email: "other@privaterelay.appleid.com", privateRelay: true)
                let outcome = try store.write {
                    try $0.completeTransferImport(userID: one, transferSub: "t.one", migrated: migrated, now: t0 + 60)
                }
                guard case let .moved(user) = outcome else { Issue.record("not moved: \(outcome)"); return }
                #expect(user.id == one)
                #expect(user.providerUserID == "new.one")
                #expect(user.email == "other@privaterelay.appleid.com")
                #expect(user.displayName == "One")
                #expect(try store.read { try $0.user(id: one) } == user)
                #expect(try store.read { try $0.user(providerUserID: "old.one") } == nil)
                #expect(try store.read { try $0.session(idHash: "session-one", now: t0 + 120) }?.user.id == one)
                let transfer = try store.read { try $0.memberTransfer(userID: one) }
                #expect(transfer?.importedAt == t0 + 60)
                #expect(transfer?.newSub == "new.one")
                #expect(try store.read { try $0.pendingTransferImports(afterUserID: 0, limit: 10) }.isEmpty)
                #expect(try store.write {
                    try $0.completeTransferImport(userID: one, transferSub: "t.one", migrated: migrated, now: t0 + 90)
                } == .notPending)
            }
        }

        @Test("import leaves a member in place when another member has the new sub, and keeps why",
              arguments: Backend.allCases)
        func takenSubLeavesMemberInPlace(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let (one, two) = try twoMembers(store)
                try store.write { try $0.recordTransferExport(userID: one, transferSub: "t.one", targetTeam: Self.teamB, now: t0) }
                let outcome = try store.write {
                    try $0.completeTransferImport(userID: one, transferSub: "t.one", migrated: appleProfile(sub: "old.two"), now: t0)
                }
                #expect(outcome == .subTaken(byUserID: two))
                #expect(try store.read { try $0.user(id: one) }?.providerUserID == "old.one")
                #expect(try store.read { try $0.pendingTransferImports(afterUserID: 0, limit: 10) }.map(\.importFailure) == ["sub_taken"])

                try store.write { try $0.recordTransferImportFailure(userID: one, failure: "invalid_request") }
                #expect(try store.read { try $0.memberTransfer(userID: one) }?.importFailure == "invalid_request")
            }
        }

        @Test("a sign-in with an unknown sub and a recorded transfer_sub is that member, who keeps the new sub",
              arguments: Backend.allCases)
        func signInByTransferSub(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let (one, _) = try twoMembers(store)
                try store.write { try $0.recordTransferExport(userID: one, transferSub: "t.one", targetTeam: Self.teamB, now: t0) }
                var profile = appleProfile(sub: "new.one", email: "one@example.com")
                profile.transferSub = "t.one"
                // Exported for team B: signing in for another team, or for no team, it is nobody.
                for team in ["TEAMC00000", nil] as [String?] {
                    var elsewhere = profile
                    elsewhere.sub = "new.one.\(team ?? "none")"
                    elsewhere.transferTeam = team
                    #expect(try store.write { try $0.upsertAppleUser(elsewhere, now: t0 + 30) }.created)
                }
                profile.transferTeam = Self.teamB
                let signedIn = try store.write { try $0.upsertAppleUser(profile, now: t0 + 60) }
                #expect(!signedIn.created)
                #expect(signedIn.user.id == one)
                #expect(signedIn.user.providerUserID == "new.one")
                #expect(signedIn.user.email == "one@example.com")
                #expect(try store.read { try $0.memberTransfer(userID: one) }?.newSub == "new.one")
                // Later sign-ins find the member by its new sub.
                #expect(try store.write { try $0.upsertAppleUser(appleProfile(sub: "new.one"), now: t0 + 120) }.user.id == one)

                // A transfer_sub nobody recorded is a new member, as any unknown sub.
                var stranger = appleProfile(sub: "new.stranger")
                stranger.transferSub = "t.unknown"
                let created = try store.write { try $0.upsertAppleUser(stranger, now: t0) }
                #expect(created.created)
                #expect(try store.read { try $0.countUsers() } == 5)
            }
        }

        @Test("deleting a member deletes its transfer record", arguments: Backend.allCases)
        func deletedWithMember(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let (one, _) = try twoMembers(store)
                try store.write { try $0.recordTransferExport(userID: one, transferSub: "t.one", targetTeam: Self.teamB, now: t0) }
                #expect(try store.write { try $0.deleteUser(id: one) })
                #expect(try store.read { try $0.memberTransfer(userID: one) } == nil)
                #expect(try store.read { try $0.transferCounts(targetTeam: nil) } == TransferCounts(members: 1, exported: 0, imported: 0))
            }
        }
    }
}
