import Foundation
import Testing
@testable import Storage

extension StoreBehaviour {
    @Suite("Refresh tokens") struct RefreshTokens {
        @Test("a token rotates once; presented again it is reported as reused", arguments: Backend.allCases)
        func rotateThenReuse(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let userID = try userWithSessions("s", ["session-1"], in: store)
                let token = refreshToken("r1", family: "f", sessionIDHash: "session-1", userID: userID)
                try store.write { try $0.insertRefreshToken(token) }
                var rotated = token
                rotated.rotatedAt = t0 + 10
                #expect(try store.write { try $0.rotateRefreshToken(tokenHash: "r1", now: t0 + 10) } == .rotated(rotated))
                #expect(try store.write { try $0.rotateRefreshToken(tokenHash: "r1", now: t0 + 20) } == .reused(rotated))
            }
        }

        @Test("an expired token, a token of an expired session and an unknown token do not rotate",
              arguments: Backend.allCases)
        func notRotated(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let userID = try userWithSessions("s", ["long"], in: store)
                let shortUserID = try userWithSessions("t", ["short"], lifetime: 60, in: store)
                try store.write { tx in
                    try tx.insertRefreshToken(refreshToken("old", family: "f", sessionIDHash: "long", userID: userID, lifetime: 60))
                    try tx.insertRefreshToken(refreshToken("orphan", family: "g", sessionIDHash: "short", userID: shortUserID))
                }
                #expect(try store.write { try $0.rotateRefreshToken(tokenHash: "old", now: t0 + 60) } == .expired)
                #expect(try store.write { try $0.rotateRefreshToken(tokenHash: "orphan", now: t0 + 60) } == .expired)
                #expect(try store.write { try $0.rotateRefreshToken(tokenHash: "missing", now: t0) } == .unknown)
                // Not marked rotated: presented again they are still expired, not reused.
                #expect(try store.write { try $0.rotateRefreshToken(tokenHash: "old", now: t0 + 61) } == .expired)
                #expect(try store.write { try $0.rotateRefreshToken(tokenHash: "orphan", now: t0 + 61) } == .expired)
            }
        }

        @Test("revoking a family deletes its tokens and its session, and nothing else", arguments: Backend.allCases)
        func revokeFamily(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let userID = try userWithSessions("s", ["phone", "tablet"], in: store)
                try store.write { tx in
                    try tx.insertRefreshToken(refreshToken("p1", family: "phone-family", sessionIDHash: "phone", userID: userID))
                    try tx.insertRefreshToken(refreshToken("p2", family: "phone-family", sessionIDHash: "phone", userID: userID))
                    try tx.insertRefreshToken(refreshToken("t1", family: "tablet-family", sessionIDHash: "tablet", userID: userID))
                }
                #expect(try store.write { try $0.revokeRefreshFamily("phone-family") } == 2)
                #expect(try store.read { try $0.session(idHash: "phone", now: t0) } == nil)
                #expect(try store.read { try $0.session(idHash: "tablet", now: t0) } != nil)
                let tablet = try store.write { try $0.rotateRefreshToken(tokenHash: "t1", now: t0) }
                guard case .rotated = tablet else {
                    Issue.record("expected the other family's token to rotate, got \(tablet)")
                    return
                }
                let p2 = refreshToken("p2", family: "phone-family", sessionIDHash: "phone", userID: userID)
                #expect(try store.write { try $0.rotateRefreshToken(tokenHash: "p2", now: t0) } == .reused(p2))
                #expect(try store.write { try $0.revokeRefreshFamily("phone-family") } == 0)
            }
        }

        @Test("a token for a missing session, or for a session of another user, is a conflict",
              arguments: Backend.allCases)
        func sessionMustMatchUser(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let owner = try userWithSessions("owner", ["owner-session"], in: store)
                let other = try userWithSessions("other", [], in: store)
                for token in [refreshToken("r", family: "f", sessionIDHash: "owner-session", userID: other),
                              refreshToken("r", family: "f", sessionIDHash: "missing", userID: owner)] {
                    let error = #expect(throws: StoreError.self) { try store.write { try $0.insertRefreshToken(token) } }
                    guard case .conflict = error else {
                        Issue.record("expected conflict, got \(String(describing: error))")
                        return
                    }
                }
                #expect(try store.write { try $0.rotateRefreshToken(tokenHash: "r", now: t0) } == .unknown)
            }
        }

        @Test("a duplicate token hash is a conflict", arguments: Backend.allCases)
        func duplicate(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let userID = try userWithSessions("s", ["session-1"], in: store)
                let token = refreshToken("r1", family: "f", sessionIDHash: "session-1", userID: userID)
                try store.write { try $0.insertRefreshToken(token) }
                let error = #expect(throws: StoreError.self) { try store.write { try $0.insertRefreshToken(token) } }
                guard case .conflict = error else {
                    Issue.record("expected conflict, got \(String(describing: error))")
                    return
                }
            }
        }

        @Test("a revoked family stays a tombstone: the 2nd, 3rd and 4th presentation of a rotated token all say reused",
              arguments: Backend.allCases)
        func reuseTombstone(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let userID = try userWithSessions("s", ["session-1"], in: store)
                try store.write {
                    try $0.insertRefreshToken(refreshToken("r1", family: "f", sessionIDHash: "session-1", userID: userID))
                }
                var rotated = refreshToken("r1", family: "f", sessionIDHash: "session-1", userID: userID)
                rotated.rotatedAt = t0 + 10
                #expect(try store.write { try $0.rotateRefreshToken(tokenHash: "r1", now: t0 + 10) } == .rotated(rotated))
                try store.write {
                    try $0.insertRefreshToken(refreshToken("r2", family: "f", sessionIDHash: "session-1", userID: userID,
                                                           createdAt: t0 + 10))
                }
                // What the API does on reuse: revoke the family.
                for presentation in 2...4 {
                    let outcome = try store.write { tx in
                        let outcome = try tx.rotateRefreshToken(tokenHash: "r1", now: t0 + Double(20 * presentation))
                        if case let .reused(token) = outcome { try tx.revokeRefreshFamily(token.familyID) }
                        return outcome
                    }
                    #expect(outcome == .reused(rotated), "presentation \(presentation)")
                }
                let successor = try store.write { try $0.rotateRefreshToken(tokenHash: "r2", now: t0 + 100) }
                guard case let .reused(token) = successor else {
                    Issue.record("expected the revoked successor to be reused, got \(successor)")
                    return
                }
                #expect(token.tokenHash == "r2")
                #expect(try store.read { try $0.session(idHash: "session-1", now: t0 + 100) } == nil)
            }
        }

        @Test("tombstones go when they expire, and with their user", arguments: Backend.allCases)
        func tombstonesExpire(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let userID = try userWithSessions("s", ["a", "b"], in: store)
                try store.write { tx in
                    try tx.insertRefreshToken(refreshToken("short", family: "f", sessionIDHash: "a", userID: userID, lifetime: 60))
                    try tx.insertRefreshToken(refreshToken("long", family: "g", sessionIDHash: "b", userID: userID))
                    try tx.revokeRefreshFamily("f")
                    try tx.revokeRefreshFamily("g")
                }
                #expect(try store.write { try $0.deleteExpired(now: t0 + 60) } == 1)
                #expect(try store.write { try $0.rotateRefreshToken(tokenHash: "short", now: t0 + 60) } == .unknown)
                let long = try store.write { try $0.rotateRefreshToken(tokenHash: "long", now: t0 + 60) }
                #expect(long == .reused(refreshToken("long", family: "g", sessionIDHash: "b", userID: userID)))
                _ = try store.write { try $0.deleteUser(id: userID) }
                #expect(try store.write { try $0.rotateRefreshToken(tokenHash: "long", now: t0 + 60) } == .unknown)
            }
        }

        @Test("a family revoked for another reason than reuse is presented again as revoked, not reused", arguments: Backend.allCases)
        func revokedIsNotReused(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let userID = try userWithSessions("s", ["a", "b"], in: store)
                try store.write { tx in
                    try tx.insertRefreshToken(refreshToken("asked", family: "f", sessionIDHash: "a", userID: userID))
                    try tx.insertRefreshToken(refreshToken("replayed", family: "g", sessionIDHash: "b", userID: userID))
                    try tx.revokeRefreshFamily("f", becauseReused: false)
                    try tx.revokeRefreshFamily("g", becauseReused: true)
                }
                let asked = try store.write { try $0.rotateRefreshToken(tokenHash: "asked", now: t0) }
                #expect(asked == .revoked(refreshToken("asked", family: "f", sessionIDHash: "a", userID: userID)))
                let replayed = try store.write { try $0.rotateRefreshToken(tokenHash: "replayed", now: t0) }
                #expect(replayed == .reused(refreshToken("replayed", family: "g", sessionIDHash: "b", userID: userID)))
            }
        }
    }
}
