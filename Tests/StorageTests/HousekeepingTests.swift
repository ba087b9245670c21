import Foundation
import Testing
@testable import Storage

extension StoreBehaviour {
    @Suite("Housekeeping") struct Housekeeping {
        @Test("deleteExpired removes expired nonces, identity token records, refresh tokens and old jtis only",
              arguments: Backend.allCases)
        func newTables(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let userID = try userWithSessions("s", ["session-1"], lifetime: 86_400, in: store)
                let retention = StoreRetention.notificationIDs
                try store.write { tx in
                    try tx.insertAPINonce(apiNonce("old", lifetime: 60))
                    try tx.insertAPINonce(apiNonce("fresh", lifetime: 600))
                    _ = try tx.recordIdentityTokenUse(tokenHash: "old", tokenExpiresAt: t0, expiresAt: t0 + 60, now: t0)
                    _ = try tx.recordIdentityTokenUse(tokenHash: "fresh", tokenExpiresAt: t0, expiresAt: t0 + 600, now: t0)
                    try tx.insertRefreshToken(refreshToken("old", family: "f", sessionIDHash: "session-1", userID: userID, lifetime: 60))
                    try tx.insertRefreshToken(refreshToken("fresh", family: "f", sessionIDHash: "session-1", userID: userID))
                    _ = try tx.recordNotification(jti: "old", now: t0 + 60 - retention)
                    _ = try tx.recordNotification(jti: "fresh", now: t0 + 61 - retention)
                }
                #expect(try store.write { try $0.deleteExpired(now: t0 + 60) } == 4)
                #expect(try store.write { try $0.consumeAPINonce("old", now: t0 + 60) } == .unknown)
                #expect(try store.write { try $0.consumeAPINonce("fresh", now: t0 + 60) } == .consumed)
                #expect(try !store.write { try $0.recordIdentityTokenUse(tokenHash: "fresh", tokenExpiresAt: t0, expiresAt: t0 + 600, now: t0 + 60) })
                // Kept, an expired refresh token would answer `.expired`.
                #expect(try store.write { try $0.rotateRefreshToken(tokenHash: "old", now: t0 + 60) } == .unknown)
                let fresh = try store.write { try $0.rotateRefreshToken(tokenHash: "fresh", now: t0 + 60) }
                guard case .rotated = fresh else {
                    Issue.record("expected the fresh token to rotate, got \(fresh)")
                    return
                }
                #expect(try store.write { try $0.recordNotification(jti: "old", now: t0 + 60) })
                #expect(try !store.write { try $0.recordNotification(jti: "fresh", now: t0 + 60) })
                #expect(try store.read { try $0.session(idHash: "session-1", now: t0 + 60) } != nil)
            }
        }

        @Test("an expired session takes its refresh tokens with it (counted as one row)", arguments: Backend.allCases)
        func sessionCascade(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let userID = try userWithSessions("s", ["short"], lifetime: 60, in: store)
                try store.write {
                    try $0.insertRefreshToken(refreshToken("r", family: "f", sessionIDHash: "short", userID: userID))
                }
                #expect(try store.write { try $0.deleteExpired(now: t0 + 60) } == 1)
                #expect(try store.write { try $0.rotateRefreshToken(tokenHash: "r", now: t0) } == .unknown)
            }
        }
    }
}
