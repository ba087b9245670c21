import Foundation
import Testing
@testable import Storage

extension StoreBehaviour {
    @Suite("Member groups and invitations") struct MemberGroups {
        private func member(_ store: any Store, _ sub: String) throws -> Int64 {
            try store.write { try $0.upsertAppleUser(appleProfile(sub: sub), now: t0).user.id }
        }

        private func invitation(_ hash: String, group: String = "staff", lifetime: TimeInterval = 600) -> GroupInvitation {
            GroupInvitation(tokenHash: hash, groupName: group, createdAt: t0, expiresAt: t0 + lifetime)
        }

        @Test("groups: added once, listed in byte order, removed; a member's deletion takes them along",
              arguments: Backend.allCases)
        func groups(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let one = try member(store, "sub.one")
                let two = try member(store, "sub.two")
                #expect(try store.write { try $0.addGroup(userID: one, group: "staff", now: t0) })
                #expect(try !store.write { try $0.addGroup(userID: one, group: "staff", now: t0 + 5) })
                #expect(try store.write { try $0.addGroup(userID: one, group: "Admins", now: t0) })
                #expect(try store.write { try $0.addGroup(userID: one, group: "admins", now: t0) })
                #expect(try store.write { try $0.addGroup(userID: two, group: "staff", now: t0) })
                #expect(try store.read { try $0.groups(userID: one) }.map(\.name) == ["Admins", "admins", "staff"])
                #expect(try store.read { try $0.groups(userID: one) }.last == MemberGroup(userID: one, name: "staff", joinedAt: t0))
                #expect(try store.write { try $0.removeGroup(userID: one, group: "admins") })
                #expect(try !store.write { try $0.removeGroup(userID: one, group: "admins") })
                #expect(try store.read { try $0.groups(userID: one) }.map(\.name) == ["Admins", "staff"])
                #expect(try store.read { try $0.memberRecords(userID: one) }?.groups.map(\.name) == ["Admins", "staff"])
                _ = try store.write { try $0.deleteUser(id: one) }
                #expect(try store.read { try $0.groups(userID: one) }.isEmpty)
                #expect(try store.read { try $0.groups(userID: two) }.map(\.name) == ["staff"])
            }
        }

        @Test("a group name that could not travel in a header is refused", arguments: Backend.allCases)
        func badGroupName(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let one = try member(store, "sub.one")
                for name in ["", "a,b", "a b", "-a", String(repeating: "x", count: 65), "a\u{0}b", "é"] {
                    #expect(throws: StoreError.self) { try store.write { try $0.addGroup(userID: one, group: name, now: t0) } }
                    #expect(throws: StoreError.self) { try store.write { try $0.insertGroupInvitation(invitation("h-\(name.utf8.count)", group: name)) } }
                }
                #expect(try store.read { try $0.groups(userID: one) }.isEmpty)
            }
        }

        @Test("an invitation is redeemed once, by its first member; expired and unknown ones change nothing; the sweep removes expired ones",
              arguments: Backend.allCases)
        func redemption(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let one = try member(store, "sub.one")
                let two = try member(store, "sub.two")
                try store.write { try $0.insertGroupInvitation(invitation("hash-a")) }
                try store.write { try $0.insertGroupInvitation(invitation("hash-b", group: "finance", lifetime: 60)) }
                #expect(try store.write { try $0.redeemGroupInvitation(tokenHash: "hash-a", userID: one, now: t0 + 1) } == .joined(group: "staff"))
                #expect(try store.write { try $0.redeemGroupInvitation(tokenHash: "hash-a", userID: two, now: t0 + 2) } == .alreadyUsed)
                #expect(try store.write { try $0.redeemGroupInvitation(tokenHash: "hash-a", userID: one, now: t0 + 2) } == .alreadyUsed)
                #expect(try store.write { try $0.redeemGroupInvitation(tokenHash: "hash-b", userID: two, now: t0 + 60) } == .expired)
                #expect(try store.write { try $0.redeemGroupInvitation(tokenHash: "hash-c", userID: two, now: t0) } == .unknown)
                #expect(try store.read { try $0.groups(userID: one) }.map(\.name) == ["staff"])
                #expect(try store.read { try $0.groups(userID: two) }.isEmpty)
                #expect(try store.read { try $0.groupInvitation(tokenHash: "hash-a") }?.redeemedAt == t0 + 1)
                #expect(try store.read { try $0.groupInvitation(tokenHash: "hash-b") }?.redeemedAt == nil)

                // A redemption rolled back with its sign-in leaves the invitation waiting.
                try store.write { try $0.insertGroupInvitation(invitation("hash-d")) }
                #expect(throws: Abort.self) {
                    try store.write { transaction in
                        _ = try transaction.redeemGroupInvitation(tokenHash: "hash-d", userID: two, now: t0 + 3)
                        throw Abort()
                    }
                }
                #expect(try store.read { try $0.groupInvitation(tokenHash: "hash-d") }?.redeemedAt == nil)
                #expect(try store.read { try $0.groups(userID: two) }.isEmpty)

                _ = try store.write { try $0.deleteExpired(now: t0 + 600) }
                #expect(try store.read { try $0.groupInvitation(tokenHash: "hash-a") } == nil)
                #expect(try store.read { try $0.groupInvitation(tokenHash: "hash-b") } == nil)
                #expect(try store.read { try $0.groups(userID: one) }.map(\.name) == ["staff"], "the group stays")
            }
        }

        @Test("of concurrent redemptions of one invitation, exactly one joins", arguments: Backend.allCases)
        func concurrentRedemption(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let members = try (0..<4).map { try member(store, "sub.\($0)") }
                try store.write { try $0.insertGroupInvitation(invitation("hash-race")) }
                let outcomes = Collected<InvitationRedemption>()
                onThreads(members.count) { index in
                    if let outcome = try? store.write({ try $0.redeemGroupInvitation(tokenHash: "hash-race", userID: members[index], now: t0 + 1) }) {
                        outcomes.append(outcome)
                    }
                }
                #expect(outcomes.all.count == members.count)
                #expect(outcomes.all.filter { $0 == .joined(group: "staff") }.count == 1)
                let joined = try members.filter { id in try !store.read { try $0.groups(userID: id) }.isEmpty }
                #expect(joined.count == 1)
            }
        }
    }
}
