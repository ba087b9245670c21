import Foundation
import Testing
@testable import Storage

extension StoreBehaviour {
    @Suite("Transactions") struct Transactions {
        @Test("a write that throws midway leaves nothing behind and rethrows the error", arguments: Backend.allCases)
        func rollbackOnThrow(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                #expect(throws: Abort.self) {
                    try store.write { tx in
                        try tx.insertLoginAttempt(loginAttempt("s"))
                        throw Abort()
                    }
                }
                #expect(try store.read { try $0.loginAttempt(state: "s") } == nil)
            }
        }

        @Test("a failing statement (here a duplicate key: a conflict) rolls back the earlier ones",
              arguments: Backend.allCases)
        func rollbackOnStatementError(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let error = #expect(throws: StoreError.self) {
                    try store.write { tx in
                        _ = try tx.upsertAppleUser(appleProfile(sub: "s"), now: t0)
                        try tx.insertLoginAttempt(loginAttempt("s"))
                        try tx.insertLoginAttempt(loginAttempt("s"))
                    }
                }
                guard case .conflict? = error else {
                    Issue.record("expected a conflict, got \(String(describing: error))")
                    return
                }
                #expect(try store.read { try $0.countUsers() } == 0)
                #expect(try store.read { try $0.loginAttempt(state: "s") } == nil)
            }
        }

        @Test("the store keeps working after a write that threw, a statement that failed and a refused read",
              arguments: Backend.allCases)
        func usableAfterRollback(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                _ = try? store.write { _ in throw Abort() }
                _ = try? store.write { tx in
                    try tx.insertLoginAttempt(loginAttempt("d"))
                    try tx.insertLoginAttempt(loginAttempt("d"))
                }
                _ = try? store.read { try $0.insertLoginAttempt(loginAttempt("r")) }
                let value = try store.write { tx in
                    try tx.insertLoginAttempt(loginAttempt("s"))
                    return 7
                }
                #expect(value == 7)
                #expect(try store.read { try $0.loginAttempt(state: "s") } != nil)
            }
        }

        @Test("a read transaction cannot write", arguments: Backend.allCases)
        func readIsReadOnly(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                #expect(throws: StoreError.self) {
                    try store.read { try $0.insertLoginAttempt(loginAttempt("s")) }
                }
                #expect(try store.read { try $0.loginAttempt(state: "s") } == nil)
            }
        }
    }
}
