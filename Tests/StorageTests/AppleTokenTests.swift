import Foundation
import Testing
@testable import Storage

extension StoreBehaviour {
    @Suite("Apple tokens") struct AppleTokens {
        /// Includes zero bytes and bytes that are not UTF-8: the column must keep them all.
        static let ciphertext: [UInt8] = [0x00, 0xFF, 0x10, 0x00, 0xC3, 0x28, 0x7F]

        @Test("one record per user: read back byte for byte, replaced on the next exchange, deleted",
              arguments: Backend.allCases)
        func upsertReadDelete(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let userID = try userWithSessions("s", [], in: store)
                let first = AppleTokenRecord(userID: userID, clientID: "com.example.web",
                                             encryptedRefreshToken: Self.ciphertext, updatedAt: t0)
                try store.write { try $0.upsertAppleToken(first) }
                #expect(try store.read { try $0.appleToken(userID: userID) } == first)

                let second = AppleTokenRecord(userID: userID, clientID: "com.example.app",
                                              encryptedRefreshToken: [1, 2, 3], updatedAt: t0 + 60)
                try store.write { try $0.upsertAppleToken(second) }
                #expect(try store.read { try $0.appleToken(userID: userID) } == second)

                #expect(try store.write { try $0.deleteAppleToken(userID: userID) })
                #expect(try !store.write { try $0.deleteAppleToken(userID: userID) })
                #expect(try store.read { try $0.appleToken(userID: userID) } == nil)
            }
        }

        @Test("a token for an unknown user is a conflict; an empty token is refused", arguments: Backend.allCases)
        func refused(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let orphan = AppleTokenRecord(userID: 999, clientID: "c", encryptedRefreshToken: [1], updatedAt: t0)
                let error = #expect(throws: StoreError.self) { try store.write { try $0.upsertAppleToken(orphan) } }
                guard case .conflict = error else {
                    Issue.record("expected conflict, got \(String(describing: error))")
                    return
                }
                let userID = try userWithSessions("s", [], in: store)
                let empty = AppleTokenRecord(userID: userID, clientID: "c", encryptedRefreshToken: [], updatedAt: t0)
                #expect(throws: StoreError.invalidArgument("an Apple token record needs the encrypted token")) {
                    try store.write { try $0.upsertAppleToken(empty) }
                }
                #expect(try store.read { try $0.appleToken(userID: userID) } == nil)
                #expect(try store.read { try $0.appleToken(userID: 999) } == nil)
            }
        }

        @Test("deleting a user deletes its sessions, refresh tokens and Apple token, but keeps queued revocations",
              arguments: Backend.allCases)
        func accountDeletion(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let userID = try userWithSessions("s", ["web", "app"], in: store)
                try store.write { tx in
                    try tx.insertRefreshToken(refreshToken("r1", family: "f", sessionIDHash: "app", userID: userID))
                    try tx.upsertAppleToken(AppleTokenRecord(userID: userID, clientID: "c",
                                                             encryptedRefreshToken: Self.ciphertext, updatedAt: t0))
                    _ = try tx.enqueueRevocation(clientID: "c", encryptedToken: Self.ciphertext,
                                                 tokenTypeHint: "refresh_token", now: t0)
                    try tx.deleteUser(id: userID)
                }
                #expect(try store.read { try $0.user(id: userID) } == nil)
                #expect(try store.read { try $0.session(idHash: "web", now: t0) } == nil)
                #expect(try store.read { try $0.session(idHash: "app", now: t0) } == nil)
                #expect(try store.read { try $0.appleToken(userID: userID) } == nil)
                #expect(try store.write { try $0.rotateRefreshToken(tokenHash: "r1", now: t0) } == .unknown)
                #expect(try store.read { try $0.pendingRevocationCount() } == 1)
                #expect(try store.read { try $0.dueRevocations(now: t0, limit: 10) }.first?.encryptedToken == Self.ciphertext)
            }
        }
    }
}
