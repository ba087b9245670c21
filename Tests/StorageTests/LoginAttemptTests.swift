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

        struct Refused: Error, Equatable {}

        @Test("consume with a refusal: the second throws it, and nothing the transaction wrote after it is kept",
              arguments: Backend.allCases)
        func refusalRollsBack(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                try store.write { try $0.insertLoginAttempt(loginAttempt("s")) }
                try store.write { try $0.consumeLoginAttempt(state: "s", now: t0 + 5, otherwise: Refused()) }
                #expect(try store.read { try $0.loginAttempt(state: "s") }?.consumedAt == t0 + 5)
                // Only statements that need not be waited for follow: the refusal must still stop the commit.
                let userID = try store.write { try $0.upsertAppleUser(appleProfile(sub: "member"), now: t0).user.id }
                #expect(throws: Refused.self) {
                    try store.write { tx in
                        try tx.consumeLoginAttempt(state: "s", now: t0 + 6, otherwise: Refused())
                        try tx.insertSession(session("after-refusal", userID: userID))
                    }
                }
                #expect(try store.read { try $0.session(idHash: "after-refusal", now: t0) } == nil)
                // Followed by a read: thrown there at the latest.
                #expect(throws: Refused.self) {
                    try store.write { tx in
                        try tx.insertLoginAttempt(loginAttempt("before-refusal"))
                        try tx.consumeLoginAttempt(state: "s", now: t0 + 7, otherwise: Refused())
                        _ = try tx.countUsers()
                        try tx.insertLoginAttempt(loginAttempt("after-read"))
                    }
                }
                for state in ["before-refusal", "after-read"] {
                    #expect(try store.read { try $0.loginAttempt(state: state) } == nil, "\(state)")
                }
                // A failure before the check is reached leaves the store usable, the attempt untouched.
                try store.write { try $0.insertLoginAttempt(loginAttempt("t")) }
                #expect(throws: Refused.self) {
                    try store.write { tx in
                        try tx.consumeLoginAttempt(state: "t", now: t0 + 8, otherwise: Refused())
                        throw Refused()
                    }
                }
                #expect(try store.read { try $0.loginAttempt(state: "t") }?.consumedAt == nil)
                #expect(try store.write { try $0.consumeLoginAttempt(state: "t", now: t0 + 9) })
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
