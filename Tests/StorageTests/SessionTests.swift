import Foundation
import Testing
@testable import Storage

extension StoreBehaviour {
    @Suite("Sessions") struct Sessions {
        @Test("lookup joins the user and respects expiry", arguments: Backend.allCases)
        func lookup(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let user = try store.write { tx in
                    let user = try tx.upsertAppleUser(appleProfile(sub: "s", email: "a@example.com"), now: t0).user
                    try tx.insertSession(session("hash-1", userID: user.id, lifetime: 3600))
                    return user
                }
                let found = try store.read { try $0.session(idHash: "hash-1", now: t0 + 3599) }
                #expect(found?.session == session("hash-1", userID: user.id, lifetime: 3600))
                #expect(found?.user == user)
                #expect(try store.read { try $0.session(idHash: "hash-1", now: t0 + 3600) } == nil)
                #expect(try store.read { try $0.session(idHash: "missing", now: t0) } == nil)
            }
        }

        @Test("a deleted session is gone", arguments: Backend.allCases)
        func delete(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                try store.write { tx in
                    let user = try tx.upsertAppleUser(appleProfile(sub: "s"), now: t0).user
                    try tx.insertSession(session("hash-1", userID: user.id))
                }
                #expect(try store.write { try $0.deleteSession(idHash: "hash-1") })
                #expect(try !store.write { try $0.deleteSession(idHash: "hash-1") })
                #expect(try store.read { try $0.session(idHash: "hash-1", now: t0) } == nil)
            }
        }

        @Test("deleteSessions(userID:) ends every session of that user, with their refresh tokens",
              arguments: Backend.allCases)
        func deleteAllOfUser(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let userID = try userWithSessions("s", ["web", "app"], in: store)
                try userWithSessions("other", ["other-web"], in: store)
                try store.write { tx in
                    try tx.insertSession(Session(idHash: "app-2", userID: userID, flow: "api", nonceVerified: false,
                                                 createdAt: t0, expiresAt: t0 + 3600))
                    try tx.insertRefreshToken(refreshToken("r1", family: "f", sessionIDHash: "app", userID: userID))
                }
                #expect(try store.write { try $0.deleteSessions(userID: userID) } == 3)
                for idHash in ["web", "app", "app-2"] {
                    #expect(try store.read { try $0.session(idHash: idHash, now: t0) } == nil, "\(idHash)")
                }
                #expect(try store.write { try $0.rotateRefreshToken(tokenHash: "r1", now: t0) } == .unknown)
                #expect(try store.read { try $0.session(idHash: "other-web", now: t0) } != nil)
                #expect(try store.read { try $0.user(id: userID) } != nil)
                #expect(try store.write { try $0.deleteSessions(userID: userID) } == 0)
            }
        }

        @Test("deleting the user deletes its sessions", arguments: Backend.allCases)
        func cascade(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let user = try store.write { tx in
                    let user = try tx.upsertAppleUser(appleProfile(sub: "s"), now: t0).user
                    try tx.insertSession(session("hash-1", userID: user.id))
                    try tx.insertSession(session("hash-2", userID: user.id))
                    return user
                }
                #expect(try store.write { try $0.deleteUser(id: user.id) })
                #expect(try store.read { try $0.session(idHash: "hash-1", now: t0) } == nil)
                #expect(try store.read { try $0.session(idHash: "hash-2", now: t0) } == nil)
            }
        }

        @Test("a session for an unknown user is a conflict", arguments: Backend.allCases)
        func unknownUser(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let error = #expect(throws: StoreError.self) {
                    try store.write { try $0.insertSession(session("hash-1", userID: 999)) }
                }
                guard case .conflict = error else {
                    Issue.record("expected conflict, got \(String(describing: error))")
                    return
                }
            }
        }

        @Test("deleteExpired removes expired attempts and sessions only", arguments: Backend.allCases)
        func deleteExpired(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                try store.write { tx in
                    let user = try tx.upsertAppleUser(appleProfile(sub: "s"), now: t0).user
                    try tx.insertLoginAttempt(loginAttempt("old", lifetime: 60))
                    try tx.insertLoginAttempt(loginAttempt("fresh", lifetime: 600))
                    try tx.insertSession(session("old", userID: user.id, lifetime: 60))
                    try tx.insertSession(session("fresh", userID: user.id, lifetime: 3600))
                }
                #expect(try store.write { try $0.deleteExpired(now: t0 + 60) } == 2)
                #expect(try store.read { try $0.loginAttempt(state: "fresh") } != nil)
                #expect(try store.read { try $0.session(idHash: "fresh", now: t0 + 60) } != nil)
                #expect(try store.read { try $0.loginAttempt(state: "old") } == nil)
                // Kept, the expired session would still be found at t0.
                #expect(try store.read { try $0.session(idHash: "old", now: t0) } == nil)
            }
        }
    }
}
