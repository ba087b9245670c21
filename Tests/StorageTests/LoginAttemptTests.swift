import Foundation
import Testing
@testable import Storage

extension StoreBehaviour {
    @Suite("Login attempts") struct LoginAttempts {
        @Test("an attempt reads back as written", arguments: Backend.allCases)
        func roundTrip(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let attempt = loginAttempt("state-1")
                try store.write { try $0.insertLoginAttempt(attempt) }
                #expect(try store.read { try $0.loginAttempt(state: "state-1") } == attempt)
                #expect(try store.read { try $0.loginAttempt(state: "other") } == nil)
            }
        }

        @Test("consume succeeds once and records when", arguments: Backend.allCases)
        func singleUse(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                try store.write { try $0.insertLoginAttempt(loginAttempt("s")) }
                #expect(try store.write { try $0.consumeLoginAttempt(state: "s", now: t0 + 5) })
                #expect(try !store.write { try $0.consumeLoginAttempt(state: "s", now: t0 + 6) })
                #expect(try store.read { try $0.loginAttempt(state: "s") }?.consumedAt == t0 + 5)
            }
        }

        @Test("an expired or unknown attempt cannot be consumed", arguments: Backend.allCases)
        func expiredRefused(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                try store.write { try $0.insertLoginAttempt(loginAttempt("s", lifetime: 600)) }
                #expect(try !store.write { try $0.consumeLoginAttempt(state: "s", now: t0 + 600) })
                #expect(try store.read { try $0.loginAttempt(state: "s") }?.consumedAt == nil)
                #expect(try !store.write { try $0.consumeLoginAttempt(state: "unknown", now: t0) })
            }
        }

        @Test("a duplicate state is a conflict", arguments: Backend.allCases)
        func duplicateState(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
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
