import Foundation
import Testing
@testable import Storage

extension StoreBehaviour {
    @Suite("Revocation queue") struct RevocationQueue {
        @Test("a new revocation is due at once and reads back as queued", arguments: Backend.allCases)
        func enqueue(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let id = try store.write {
                    try $0.enqueueRevocation(clientID: "com.example.app", encryptedToken: [9, 0, 9],
                                             tokenTypeHint: "refresh_token", now: t0)
                }
                #expect(try store.read { try $0.dueRevocations(now: t0, limit: 10) } == [
                    PendingRevocation(id: id, clientID: "com.example.app", encryptedToken: [9, 0, 9],
                                      tokenTypeHint: "refresh_token", attempts: 0, nextAttemptAt: t0,
                                      lastError: nil, createdAt: t0),
                ])
                #expect(try store.read { try $0.dueRevocations(now: t0 - 1, limit: 10) } == [])
                #expect(try store.read { try $0.pendingRevocationCount() } == 1)
            }
        }

        @Test("due ones come longest-waiting first; postponed ones wait; completed ones go",
              arguments: Backend.allCases)
        func duePostponeComplete(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let (a, b, c) = try store.write { tx in
                    (try tx.enqueueRevocation(clientID: "c", encryptedToken: [1], tokenTypeHint: "refresh_token", now: t0),
                     try tx.enqueueRevocation(clientID: "c", encryptedToken: [2], tokenTypeHint: "refresh_token", now: t0),
                     try tx.enqueueRevocation(clientID: "c", encryptedToken: [3], tokenTypeHint: "access_token", now: t0 + 1))
                }
                #expect(try store.read { try $0.dueRevocations(now: t0 + 1, limit: 10) }.map(\.id) == [a, b, c])
                #expect(try store.read { try $0.dueRevocations(now: t0 + 1, limit: 2) }.map(\.id) == [a, b])

                try store.write { try $0.postponeRevocation(id: a, nextAttemptAt: t0 + 60, error: "HTTP 503 from /auth/revoke") }
                #expect(try store.read { try $0.dueRevocations(now: t0 + 59, limit: 10) }.map(\.id) == [b, c])
                try store.write { try $0.postponeRevocation(id: a, nextAttemptAt: t0 + 120, error: "timed out") }
                let postponed = try #require(try store.read { try $0.dueRevocations(now: t0 + 120, limit: 10) }.last)
                #expect(postponed.id == a)
                #expect(postponed.attempts == 2)
                #expect(postponed.lastError == "timed out")
                #expect(postponed.nextAttemptAt == t0 + 120)

                try store.write { try $0.completeRevocation(id: b) }
                #expect(try store.read { try $0.dueRevocations(now: t0 + 120, limit: 10) }.map(\.id) == [c, a])
                #expect(try store.read { try $0.pendingRevocationCount() } == 2)
            }
        }

        @Test("the oldest queued revocation's age is its first queuing, however often it was postponed",
              arguments: Backend.allCases)
        func oldestPending(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                #expect(try store.read { try $0.oldestPendingRevocationCreatedAt() } == nil)
                let (a, b) = try store.write { tx in
                    (try tx.enqueueRevocation(clientID: "c", encryptedToken: [1], tokenTypeHint: "refresh_token", now: t0),
                     try tx.enqueueRevocation(clientID: "c", encryptedToken: [2], tokenTypeHint: "refresh_token", now: t0 + 5))
                }
                try store.write { try $0.postponeRevocation(id: a, nextAttemptAt: t0 + 3600, error: "timed out") }
                #expect(try store.read { try $0.oldestPendingRevocationCreatedAt() } == t0)
                try store.write { try $0.completeRevocation(id: a) }
                #expect(try store.read { try $0.oldestPendingRevocationCreatedAt() } == t0 + 5)
                try store.write { try $0.completeRevocation(id: b) }
                #expect(try store.read { try $0.oldestPendingRevocationCreatedAt() } == nil)
            }
        }

        @Test("an empty token is refused", arguments: Backend.allCases)
        func emptyTokenRefused(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                #expect(throws: StoreError.self) {
                    try store.write { try $0.enqueueRevocation(clientID: "c", encryptedToken: [], tokenTypeHint: "refresh_token", now: t0) }
                }
                #expect(try store.read { try $0.pendingRevocationCount() } == 0)
            }
        }

        @Test("deleteExpired never drops a queued revocation", arguments: Backend.allCases)
        func survivesHousekeeping(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                _ = try store.write {
                    try $0.enqueueRevocation(clientID: "c", encryptedToken: [1], tokenTypeHint: "refresh_token", now: t0)
                }
                let removed = try store.write { try $0.deleteExpired(now: t0 + 365 * 86_400) }
                let pending = try store.read { try $0.pendingRevocationCount() }
                #expect(removed == 0)
                #expect(pending == 1)
            }
        }
    }
}
