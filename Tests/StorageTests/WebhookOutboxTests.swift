import Foundation
import Testing
@testable import Storage

extension StoreBehaviour {
    @Suite("Webhook outbox") struct WebhookOutbox {
        static func enqueue(_ transaction: any StoreTransaction, _ id: String, _ type: String = "member.created",
                            at time: Date = t0) throws {
            try transaction.enqueueWebhookEvent(messageID: id, eventType: type, payload: #"{"type":"\#(type)"}"#, now: time,
                                                giveUpAt: time + 3 * 86_400)
        }

        @Test("an event is due at once, claimed by one caller until its claim runs out, and leaves once delivered",
              arguments: Backend.allCases)
        func claimAndComplete(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                try store.write { try Self.enqueue($0, "msg_a") }
                #expect(try store.read { try $0.nextWebhookAttemptAt() } == t0)
                let claimed = try store.write { try $0.claimDueWebhookEvents(now: t0, limit: 10, claimedUntil: t0 + 60) }
                #expect(claimed.map(\.messageID) == ["msg_a"])
                #expect(claimed.first?.payload == #"{"type":"member.created"}"#)
                #expect(claimed.first?.attempts == 0)
                // Claimed: nobody else gets it before the claim runs out.
                #expect(try store.write { try $0.claimDueWebhookEvents(now: t0 + 59, limit: 10, claimedUntil: t0 + 120) } == [])
                #expect(try store.write { try $0.claimDueWebhookEvents(now: t0 + 60, limit: 10, claimedUntil: t0 + 120) }
                    .map(\.messageID) == ["msg_a"])
                try store.write { try $0.completeWebhookEvent(id: claimed[0].id) }
                #expect(try store.read { try $0.webhookBacklog() } == WebhookBacklog(pending: 0, failed: 0, oldestPendingCreatedAt: nil))
                #expect(try store.read { try $0.nextWebhookAttemptAt() } == nil)
            }
        }

        @Test("an event written in a transaction that rolls back is not in the outbox", arguments: Backend.allCases)
        func rolledBack(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                struct Refused: Error {}
                #expect(throws: Refused.self) {
                    try fixture.store.write { transaction in
                        try Self.enqueue(transaction, "msg_gone")
                        throw Refused()
                    }
                }
                #expect(try fixture.store.read { try $0.webhookEvents(failedOnly: false, limit: 10) } == [])
            }
        }

        @Test("a postponed event counts its attempts and waits; a failed one leaves the backlog until retried",
              arguments: Backend.allCases)
        func postponeFailRetry(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                try store.write { tx in
                    try Self.enqueue(tx, "msg_a", at: t0)
                    try Self.enqueue(tx, "msg_b", "member.deleted", at: t0 + 5)
                }
                let (a, b) = try store.read { tx in
                    let all = try tx.webhookEvents(failedOnly: false, limit: 10)
                    return (all[0].id, all[1].id)
                }
                try store.write { try $0.postponeWebhookEvent(id: a, nextAttemptAt: t0 + 30, error: "HTTP 503") }
                #expect(try store.read { try $0.nextWebhookAttemptAt() } == t0 + 5)
                try store.write { try $0.failWebhookEvent(id: b, now: t0 + 10, error: "connection refused") }
                #expect(try store.read { try $0.webhookBacklog() }
                        == WebhookBacklog(pending: 1, failed: 1, oldestPendingCreatedAt: t0))
                let failed = try store.read { try $0.webhookEvents(failedOnly: true, limit: 10) }
                #expect(failed.map(\.messageID) == ["msg_b"])
                #expect(failed.first?.attempts == 1)
                #expect(failed.first?.lastError == "connection refused")
                #expect(failed.first?.failedAt == t0 + 10)
                // A failed event is never claimed.
                #expect(try store.write { try $0.claimDueWebhookEvents(now: t0 + 30, limit: 10, claimedUntil: t0 + 90) }
                    .map(\.messageID) == ["msg_a"])

                #expect(try store.write { try $0.retryWebhookEvents(now: t0 + 40, giveUpAt: t0 + 1000) } == 1)
                let due = try store.write { try $0.claimDueWebhookEvents(now: t0 + 40, limit: 10, claimedUntil: t0 + 100) }
                #expect(due.map(\.messageID) == ["msg_a", "msg_b"])
                #expect(due.last?.giveUpAt == t0 + 1000)
                #expect(due.last?.failedAt == nil)
                #expect(try store.read { try $0.webhookBacklog() }
                        == WebhookBacklog(pending: 2, failed: 0, oldestPendingCreatedAt: t0))
            }
        }

        @Test("callers claiming at the same time never get the same event", arguments: Backend.allCases)
        func concurrentClaims(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                try fixture.store.write { tx in
                    for index in 0..<40 { try Self.enqueue(tx, "msg_\(index)") }
                }
                let claimed = Collected<String>()
                let stores = try (0..<4).map { _ in try fixture.openAnother() }
                onThreads(4) { index in
                    for _ in 0..<10 {
                        let got = (try? stores[index].write {
                            try $0.claimDueWebhookEvents(now: t0, limit: 3, claimedUntil: t0 + 60)
                        }) ?? []
                        got.forEach { claimed.append($0.messageID) }
                    }
                }
                #expect(claimed.all.count == Set(claimed.all).count)
                #expect(claimed.all.count == 40)
            }
        }
    }
}
