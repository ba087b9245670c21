import Foundation
import Testing
@testable import Storage

extension StoreBehaviour {
    @Suite("Concurrency") struct Concurrency {
        @Test("8 threads × 200 sign-ins: no errors, nothing lost", arguments: Backend.allCases)
        func manyThreads(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let errors = Collected<String>()
                onThreads(8) { thread in
                    for i in 0..<200 {
                        do {
                            let idHash = "t\(thread)-s\(i)"
                            try store.write { tx in
                                let user = try tx.upsertAppleUser(
                                    appleProfile(sub: "t\(thread)-u\(i % 10)", email: "u\(i)@example.com"), now: t0).user
                                try tx.insertSession(session(idHash, userID: user.id))
                            }
                            if try store.read({ try $0.session(idHash: idHash, now: t0) }) == nil {
                                errors.append("session \(idHash) not found")
                            }
                        } catch {
                            errors.append("\(error)")
                        }
                    }
                }
                #expect(errors.all.isEmpty, "\(errors.all.prefix(5))")
                #expect(try store.read { try $0.countUsers() } == 80)
            }
        }

        @Test("two stores on one database (as two processes would) wait for each other instead of failing",
              arguments: Backend.allCases)
        func twoStoresOneDatabase(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let first = fixture.store
                let second = try fixture.openAnother()
                let errors = Collected<String>()
                onThreads(8) { thread in
                    let store = thread.isMultiple(of: 2) ? first : second
                    for i in 0..<50 {
                        do {
                            try store.write { tx in
                                try tx.insertLoginAttempt(loginAttempt("t\(thread)-\(i)"))
                            }
                        } catch {
                            errors.append("\(error)")
                        }
                    }
                }
                #expect(errors.all.isEmpty, "\(errors.all.prefix(5))")
                let missing = try first.read { tx in
                    try (0..<8).flatMap { thread in (0..<50).map { "t\(thread)-\($0)" } }
                        .filter { try tx.loginAttempt(state: $0) == nil }
                }
                #expect(missing == [])
            }
        }
    }
}
