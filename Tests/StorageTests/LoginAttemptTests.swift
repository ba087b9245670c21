import Foundation
import Testing
@testable import Storage

extension StoreBehaviour {
    @Suite("Login attempts") struct LoginAttempts {
        @Test("an attempt reads back as written")
        func roundTrip() throws {
            try withTemporaryStore { store, _ throws in
                let attempt = loginAttempt("state-1")
                try store.write { try $0.insertLoginAttempt(attempt) }
                #expect(try store.read { try $0.loginAttempt(state: "state-1") } == attempt)
                #expect(try store.read { try $0.loginAttempt(state: "other") } == nil)
            }
        }

        @Test("consume succeeds once and records when")
        func singleUse() throws {
            try withTemporaryStore { store, _ throws in
                try store.write { try $0.insertLoginAttempt(loginAttempt("s")) }
                #expect(try store.write { try $0.consumeLoginAttempt(state: "s", now: t0 + 5) })
                #expect(try !store.write { try $0.consumeLoginAttempt(state: "s", now: t0 + 6) })
                #expect(try store.read { try $0.loginAttempt(state: "s") }?.consumedAt == t0 + 5)
            }
        }

        @Test("an expired or unknown attempt cannot be consumed")
        func expiredRefused() throws {
            try withTemporaryStore { store, _ throws in
                try store.write { try $0.insertLoginAttempt(loginAttempt("s", lifetime: 600)) }
                #expect(try !store.write { try $0.consumeLoginAttempt(state: "s", now: t0 + 600) })
                #expect(try store.read { try $0.loginAttempt(state: "s") }?.consumedAt == nil)
                #expect(try !store.write { try $0.consumeLoginAttempt(state: "unknown", now: t0) })
            }
        }

        @Test("a duplicate state is a conflict")
        func duplicateState() throws {
            try withTemporaryStore { store, _ throws in
                try store.write { try $0.insertLoginAttempt(loginAttempt("s")) }
                let error = #expect(throws: StoreError.self) {
                    try store.write { try $0.insertLoginAttempt(loginAttempt("s")) }
                }
                guard case .conflict = error else {
                    Issue.record("expected conflict, got \(String(describing: error))")
                    return
                }
            }
        }
    }
}
