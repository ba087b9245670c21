import Foundation
import Testing
@testable import Storage

extension StoreBehaviour {
    @Suite("Apple users") struct AppleUsers {
        @Test("a returning member's sign-ins draw no member id: the next new member gets the next id", arguments: Backend.allCases)
        func returningSignInsDrawNoID(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let first = try fixture.store.write { try $0.upsertAppleUser(appleProfile(sub: "first"), now: t0).user }
                for minute in 1...3 {
                    _ = try fixture.store.write {
                        try $0.upsertAppleUser(appleProfile(sub: "first"), now: t0 + Double(60 * minute))
                    }
                }
                let second = try fixture.store.write { try $0.upsertAppleUser(appleProfile(sub: "second"), now: t0).user }
                #expect(second.id == first.id + 1)
            }
        }

        @Test("upsert creates a user, then finds it by sub", arguments: Backend.allCases)
        func createThenFind(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let first = try store.write {
                    try $0.upsertAppleUser(appleProfile(sub: "001.abc", email: "a@example.com", name: "Kim"), now: t0)
                }
                #expect(first.created)
                #expect(first.user.provider == "apple")
                #expect(first.user.providerUserID == "001.abc")
                #expect(first.user.email == "a@example.com")
                #expect(first.user.displayName == "Kim")
                #expect(first.user.createdAt == t0)

                let second = try store.write {
                    try $0.upsertAppleUser(appleProfile(sub: "001.abc", email: "a@example.com"), now: t0 + 60)
                }
                #expect(!second.created)
                #expect(second.user.id == first.user.id)
                #expect(try store.read { try $0.user(id: first.user.id) } == second.user)
            }
        }

        @Test("the same email with another sub is another user", arguments: Backend.allCases)
        func neverMatchedByEmail(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let (one, two) = try store.write { tx in
                    (try tx.upsertAppleUser(appleProfile(sub: "sub-1", email: "same@example.com"), now: t0),
                     try tx.upsertAppleUser(appleProfile(sub: "sub-2", email: "same@example.com"), now: t0))
                }
                #expect(one.created && two.created)
                #expect(one.user.id != two.user.id)
            }
        }

        @Test("a known name is kept when a later sign-in sends none, blank, or another one",
              arguments: Backend.allCases, [nil, "", "   ", "Someone Else"] as [String?])
        func nameKept(backend: Backend, laterName: String?) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                _ = try store.write { try $0.upsertAppleUser(appleProfile(sub: "s", name: "Kim Minji"), now: t0) }
                let later = try store.write {
                    try $0.upsertAppleUser(appleProfile(sub: "s", name: laterName), now: t0 + 60)
                }
                #expect(later.user.displayName == "Kim Minji")
            }
        }

        @Test("a name arriving after a nameless first sign-in is filled in", arguments: Backend.allCases)
        func nameFilledWhenUnknown(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let first = try store.write { try $0.upsertAppleUser(appleProfile(sub: "s", name: " "), now: t0) }
                #expect(first.user.displayName == nil)
                let later = try store.write { try $0.upsertAppleUser(appleProfile(sub: "s", name: "Lee"), now: t0 + 60) }
                #expect(later.user.displayName == "Lee")
            }
        }

        @Test("email and its flags follow the newer token", arguments: Backend.allCases)
        func emailUpdated(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let first = try store.write {
                    try $0.upsertAppleUser(appleProfile(sub: "s", email: "old@example.com", verified: false), now: t0)
                }
                let later = try store.write {
                    try $0.upsertAppleUser(
                        appleProfile(sub: "s", email: "x1@privaterelay.appleid.com", verified: true, privateRelay: true),
                        now: t0 + 60)
                }
                #expect(later.user.email == "x1@privaterelay.appleid.com")
                #expect(later.user.emailVerified)
                #expect(later.user.isPrivateEmail)
                #expect(later.user.createdAt == first.user.createdAt)
                #expect(later.user.updatedAt == t0 + 60)
                #expect(try store.read { try $0.user(id: first.user.id) } == later.user)
            }
        }

        @Test("a token without email keeps the stored one; nothing changed keeps updatedAt",
              arguments: Backend.allCases)
        func missingEmailKept(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let first = try store.write {
                    try $0.upsertAppleUser(appleProfile(sub: "s", email: "a@example.com"), now: t0)
                }
                let later = try store.write { try $0.upsertAppleUser(appleProfile(sub: "s"), now: t0 + 60) }
                #expect(later.user == first.user)
            }
        }

        @Test("an empty sub is refused and writes nothing", arguments: Backend.allCases)
        func emptySubRefused(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                #expect(throws: StoreError.invalidArgument("an Apple user needs a non-empty sub")) {
                    try store.write { try $0.upsertAppleUser(appleProfile(sub: ""), now: t0) }
                }
                #expect(try store.read { try $0.countUsers() } == 0)
            }
        }

        @Test("a NUL in the sub, email or name is refused as an invalid argument and writes nothing (stored, \"a\\0b\" would be the user \"a\")",
              arguments: Backend.allCases,
                         [appleProfile(sub: "001.a\u{0}b"), appleProfile(sub: "s", email: "a@example.com\u{0}x"),
                          appleProfile(sub: "s", name: "Kim\u{0}Minji")])
        func nulRefused(backend: Backend, profile: AppleUserProfile) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                _ = try store.write { try $0.upsertAppleUser(appleProfile(sub: "001.a"), now: t0) }
                let refusal = StoreError.invalidArgument("an Apple user's sub, email and name cannot contain a NUL character")
                #expect(throws: refusal) {
                    try store.write { try $0.upsertAppleUser(profile, now: t0) }
                }
                #expect(try store.read { try $0.countUsers() } == 1)
            }
        }

        @Test("a new user comes back exactly as a later read finds it, each with its own id",
              arguments: Backend.allCases,
                         [appleProfile(sub: "001.n", email: "x1@privaterelay.appleid.com", verified: true,
                                       privateRelay: true, name: "Kim Minji"),
                          appleProfile(sub: "001.m", email: " ", verified: true, privateRelay: true, name: nil)])
        func newUserAsStored(backend: Backend, profile: AppleUserProfile) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let earlier = try store.write { try $0.upsertAppleUser(appleProfile(sub: "001.earlier"), now: t0) }
                // A time between two seconds: the store keeps whole seconds, and so must the user it returns.
                let created = try store.write { try $0.upsertAppleUser(profile, now: t0 + 0.75) }
                #expect(created.created)
                #expect(created.user.id > earlier.user.id)
                #expect(created.user.createdAt == t0)
                #expect(try store.read { try $0.user(id: created.user.id) } == created.user)
            }
        }

        @Test("unknown id finds nothing; deleteUser reports whether it deleted", arguments: Backend.allCases)
        func lookupAndDelete(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                #expect(try store.read { try $0.user(id: 42) } == nil)
                let user = try store.write { try $0.upsertAppleUser(appleProfile(sub: "s"), now: t0).user }
                #expect(try store.write { try $0.deleteUser(id: user.id) })
                #expect(try !store.write { try $0.deleteUser(id: user.id) })
                #expect(try store.read { try $0.user(id: user.id) } == nil)
            }
        }

        @Test("a member id is never given out twice: after the newest user is deleted, the next one gets a new id",
              arguments: Backend.allCases)
        func idsNeverReused(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let first = try store.write { try $0.upsertAppleUser(appleProfile(sub: "first"), now: t0).user }
                let newest = try store.write { try $0.upsertAppleUser(appleProfile(sub: "newest"), now: t0).user }
                #expect(try store.write { try $0.deleteUser(id: newest.id) })
                let next = try store.write { try $0.upsertAppleUser(appleProfile(sub: "next"), now: t0).user }
                #expect(next.id != newest.id)
                #expect(next.id > newest.id)
                #expect(try store.read { try $0.user(id: first.id) } == first)
            }
        }
    }
}
