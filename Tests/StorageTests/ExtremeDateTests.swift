import Foundation
import Testing
@testable import Storage

extension StoreBehaviour {
    @Suite("Dates beyond 64-bit seconds") struct ExtremeDates {
        static let farFuture = Date(timeIntervalSince1970: 1e19)
        static let farPast = Date(timeIntervalSince1970: -1e19)

        @Test("an identity token claiming to expire in 1e19 seconds is recorded once, then a replay",
              arguments: Backend.allCases)
        func hugeTokenExpiry(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let first = try store.write {
                    try $0.recordIdentityTokenUse(tokenHash: "h", tokenExpiresAt: t0, expiresAt: Self.farFuture, now: t0)
                }
                let replay = try store.write {
                    try $0.recordIdentityTokenUse(tokenHash: "h", tokenExpiresAt: t0, expiresAt: Self.farFuture, now: t0 + 1)
                }
                #expect(first)
                #expect(!replay)
            }
        }

        @Test("sessions, attempts and nonces with dates out of range are stored clamped, never a crash",
              arguments: Backend.allCases)
        func clampedEverywhere(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let userID = try userWithSessions("s", [], in: store)
                try store.write { tx in
                    try tx.insertSession(Session(idHash: "forever", userID: userID, flow: "web", nonceVerified: true,
                                                 createdAt: Self.farPast, expiresAt: .distantFuture + 1e19))
                    try tx.insertLoginAttempt(LoginAttempt(state: "s", nonce: "n", bindingHash: "b",
                                                           createdAt: Self.farPast, expiresAt: Self.farFuture))
                    try tx.insertAPINonce(APINonce(nonce: "n", createdAt: t0, expiresAt: Self.farFuture))
                }
                #expect(try store.read { try $0.session(idHash: "forever", now: t0) } != nil)
                #expect(try store.read { try $0.session(idHash: "forever", now: Self.farFuture) } == nil)
                let consumed = try store.write { try $0.consumeLoginAttempt(state: "s", now: Self.farPast) }
                #expect(consumed)
                #expect(try store.write { try $0.consumeAPINonce("n", now: Self.farFuture) } == .expired)
                #expect(try store.write { try $0.deleteExpired(now: Self.farFuture) } >= 1)
            }
        }

        @Test("a time that is not a number is refused, and nothing is written", arguments: Backend.allCases)
        func notANumber(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let error = #expect(throws: StoreError.self) {
                    try store.write { try $0.recordIdentityTokenUse(tokenHash: "h", tokenExpiresAt: t0, expiresAt: Date(timeIntervalSince1970: .nan), now: t0) }
                }
                guard case .invalidArgument = error else {
                    Issue.record("expected invalidArgument, got \(String(describing: error))")
                    return
                }
                #expect(try store.write { try $0.recordIdentityTokenUse(tokenHash: "h", tokenExpiresAt: t0, expiresAt: t0 + 60, now: t0) })
            }
        }
    }
}
