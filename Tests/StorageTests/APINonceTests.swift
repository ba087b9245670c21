import Foundation
import Testing
@testable import Storage

extension StorageTests {
    @Suite("API nonces") struct APINonces {
        @Test("a nonce is consumed once, then reported as already used")
        func singleUse() throws {
            try withTemporaryStore { store, path throws in
                try store.write { try $0.insertAPINonce(apiNonce("n")) }
                #expect(try store.write { try $0.consumeAPINonce("n", now: t0 + 5) } == .consumed)
                #expect(try store.write { try $0.consumeAPINonce("n", now: t0 + 6) } == .alreadyUsed)
                #expect(try scalar("SELECT consumed_at FROM api_nonces WHERE nonce = 'n'", in: path) == t0.unixSeconds + 5)
            }
        }

        @Test("an expired nonce is refused and stays unconsumed; an unknown one is unknown")
        func expiredAndUnknown() throws {
            try withTemporaryStore { store, path throws in
                try store.write { try $0.insertAPINonce(apiNonce("n", lifetime: 300)) }
                #expect(try store.write { try $0.consumeAPINonce("n", now: t0 + 300) } == .expired)
                #expect(try scalar("SELECT COUNT(*) FROM api_nonces WHERE consumed_at IS NULL", in: path) == 1)
                #expect(try store.write { try $0.consumeAPINonce("other", now: t0) } == .unknown)
            }
        }

        @Test("a duplicate nonce is a conflict")
        func duplicate() throws {
            try withTemporaryStore { store, _ throws in
                try store.write { try $0.insertAPINonce(apiNonce("n")) }
                let error = #expect(throws: StoreError.self) {
                    try store.write { try $0.insertAPINonce(apiNonce("n")) }
                }
                guard case .conflict = error else {
                    Issue.record("expected conflict, got \(String(describing: error))")
                    return
                }
            }
        }

        @Test("8 threads on two stores consuming the same nonce: exactly one consumes it")
        func concurrentConsume() throws {
            try withTemporaryStore { first, path throws in
                let second = try SQLiteStore(path: path)
                try first.write { try $0.insertAPINonce(apiNonce("contested")) }
                let outcomes = Collected<String>()
                onThreads(8) { thread in
                    let store = thread.isMultiple(of: 2) ? first : second
                    do {
                        outcomes.append("\(try store.write { try $0.consumeAPINonce("contested", now: t0 + 1) })")
                    } catch {
                        outcomes.append("error: \(error)")
                    }
                }
                #expect(outcomes.all.filter { $0 == "consumed" }.count == 1)
                #expect(outcomes.all.filter { $0 == "alreadyUsed" }.count == 7)
            }
        }
    }
}
