import Foundation
import Testing
@testable import Storage

extension StoreBehaviour {
    @Suite("API nonces") struct APINonces {
        @Test("a nonce is consumed once, then reported as already used", arguments: Backend.allCases)
        func singleUse(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                try store.write { try $0.insertAPINonce(apiNonce("n")) }
                #expect(try store.write { try $0.consumeAPINonce("n", now: t0 + 5) } == .consumed)
                #expect(try store.write { try $0.consumeAPINonce("n", now: t0 + 6) } == .alreadyUsed)
            }
        }

        @Test("an expired nonce is refused and stays unconsumed; an unknown one is unknown",
              arguments: Backend.allCases)
        func expiredAndUnknown(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                try store.write { try $0.insertAPINonce(apiNonce("n", lifetime: 300)) }
                #expect(try store.write { try $0.consumeAPINonce("n", now: t0 + 300) } == .expired)
                // Still unconsumed: presented again it is expired, not already used.
                #expect(try store.write { try $0.consumeAPINonce("n", now: t0 + 301) } == .expired)
                #expect(try store.write { try $0.consumeAPINonce("other", now: t0) } == .unknown)
            }
        }

        @Test("a duplicate nonce is a conflict", arguments: Backend.allCases)
        func duplicate(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
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
    }
}
