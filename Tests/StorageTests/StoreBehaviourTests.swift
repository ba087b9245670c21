import Foundation
import Testing
@testable import Storage

/// Every behaviour the service relies on, asserted once through `any Store` and run on
/// each backend, each time on a database of its own.
@Suite("Store behaviour, on every backend") struct StoreBehaviourTests {
    static let threads = 8

    /// A new Apple user (by `sub`) with one session per hash; returns the user's id.
    private func signedInUser(_ sub: String, sessions: [String], lifetime: TimeInterval = 86_400,
                              in store: any Store) throws -> Int64 {
        try store.write { tx in
            let user = try tx.upsertAppleUser(appleProfile(sub: sub), now: t0).user
            for idHash in sessions {
                try tx.insertSession(session(idHash, userID: user.id, lifetime: lifetime))
            }
            return user.id
        }
    }

    /// `threads` threads, alternating between two stores on one database, each calling `body` once.
    private func race(_ fixture: StoreFixture, _ body: @escaping @Sendable (any Store) throws -> String) throws -> [String] {
        let stores = [fixture.store, try fixture.openAnother()]
        // Every thread holds a connection at once, so pools open them all before the race
        // (otherwise the time to connect would spread the racers out).
        onThreads(Self.threads) { thread in
            _ = try? stores[thread % 2].read { _ in Thread.sleep(forTimeInterval: 0.05) }
        }
        let outcomes = Collected<String>()
        onThreads(Self.threads) { thread in
            do {
                outcomes.append(try body(stores[thread % 2]))
            } catch {
                outcomes.append("error: \(error)")
            }
        }
        return outcomes.all.sorted()
    }

    @Test("a login attempt is consumed once, by exactly one of many racing callers", arguments: Backend.allCases)
    func loginAttemptSingleUse(backend: Backend) throws {
        try withFreshStore(backend) { fixture in
            let store = fixture.store
            try store.write { tx in
                try tx.insertLoginAttempt(loginAttempt("race"))
                try tx.insertLoginAttempt(loginAttempt("short", lifetime: 60))
            }
            let outcomes = try race(fixture) { store in
                try store.write { try $0.consumeLoginAttempt(state: "race", now: t0 + 1) } ? "won" : "lost"
            }
            #expect(outcomes == Array(repeating: "lost", count: Self.threads - 1) + ["won"])
            let stored = try store.read { try $0.loginAttempt(state: "race") }
            #expect(stored?.consumedAt == t0 + 1)
            let expired = try store.write { try $0.consumeLoginAttempt(state: "short", now: t0 + 60) }
            let unknown = try store.write { try $0.consumeLoginAttempt(state: "nope", now: t0) }
            #expect(!expired && !unknown)
        }
    }

    @Test("writes started without waiting are each called back once with their own outcome, after their commit (a read from the callback sees them) or rolled back",
          arguments: Backend.allCases)
    func writesWithoutWaiting(backend: Backend) throws {
        try withFreshStore(backend) { fixture in
            let store = fixture.store
            let outcomes = Collected<String>()
            let done = DispatchGroup()
            for index in 0..<24 {
                done.enter()
                store.write({ tx -> Int in
                    try tx.insertLoginAttempt(loginAttempt("started-\(index)"))
                    if index.isMultiple(of: 4) { throw Abort() }
                    return index
                }, completion: { outcome in
                    switch outcome {
                    case let .success(value):
                        let seen = (try? store.read { try $0.loginAttempt(state: "started-\(index)") }) != nil
                        outcomes.append(seen ? "\(value)" : "\(value) not yet visible")
                    case let .failure(error): outcomes.append("\(index) \(error is Abort ? "abort" : "error: \(error)")")
                    }
                    done.leave()
                })
            }
            #expect(done.wait(timeout: .now() + 20) == .success)
            let expected = (0..<24).map { $0.isMultiple(of: 4) ? "\($0) abort" : "\($0)" }
            #expect(outcomes.all.sorted() == expected.sorted())
            let kept = try store.read { tx in try (0..<24).filter { try tx.loginAttempt(state: "started-\($0)") != nil } }
            #expect(kept == (0..<24).filter { !$0.isMultiple(of: 4) })
        }
    }

    @Test("an API nonce is consumed once under concurrency; unknown, expired and used are told apart",
          arguments: Backend.allCases)
    func apiNonceSingleUse(backend: Backend) throws {
        try withFreshStore(backend) { fixture in
            let store = fixture.store
            try store.write { tx in
                try tx.insertAPINonce(apiNonce("race"))
                try tx.insertAPINonce(apiNonce("short", lifetime: 30))
            }
            let outcomes = try race(fixture) { store in
                "\(try store.write { try $0.consumeAPINonce("race", now: t0 + 1) })"
            }
            #expect(outcomes == Array(repeating: "alreadyUsed", count: Self.threads - 1) + ["consumed"])
            let expired = try store.write { try $0.consumeAPINonce("short", now: t0 + 30) }
            let unknown = try store.write { try $0.consumeAPINonce("nope", now: t0) }
            #expect(expired == .expired)
            #expect(unknown == .unknown)
        }
    }

    @Test("an identity token is accepted once until it expires, also when replayed concurrently",
          arguments: Backend.allCases)
    func identityTokenReplay(backend: Backend) throws {
        try withFreshStore(backend) { fixture in
            let store = fixture.store
            let outcomes = try race(fixture) { store in
                try store.write { try $0.recordIdentityTokenUse(tokenHash: "h", tokenExpiresAt: t0, expiresAt: t0 + 600, now: t0) }
                    ? "first" : "replay"
            }
            #expect(outcomes == ["first"] + Array(repeating: "replay", count: Self.threads - 1))
            let beforeExpiry = try store.write { try $0.recordIdentityTokenUse(tokenHash: "h", tokenExpiresAt: t0, expiresAt: t0 + 900, now: t0 + 599) }
            let atExpiry = try store.write { try $0.recordIdentityTokenUse(tokenHash: "h", tokenExpiresAt: t0, expiresAt: t0 + 1200, now: t0 + 600) }
            #expect(!beforeExpiry)
            #expect(atExpiry)
        }
    }

    @Test("a refresh token rotates once among racing callers; presented again it is reused; the family goes together",
          arguments: Backend.allCases)
    func refreshRotationAndReuse(backend: Backend) throws {
        try withFreshStore(backend) { fixture in
            let store = fixture.store
            let userID = try signedInUser("s", sessions: ["session-1", "session-2"], in: store)
            try store.write { tx in
                try tx.insertRefreshToken(refreshToken("r1", family: "f", sessionIDHash: "session-1", userID: userID))
                try tx.insertRefreshToken(refreshToken("other", family: "g", sessionIDHash: "session-2", userID: userID))
            }
            let outcomes = try race(fixture) { store in
                switch try store.write({ try $0.rotateRefreshToken(tokenHash: "r1", now: t0 + 1) }) {
                case .rotated: "rotated"
                case .reused: "reused"
                case let other: "\(other)"
                }
            }
            #expect(outcomes == Array(repeating: "reused", count: Self.threads - 1) + ["rotated"])
            try store.write { tx in
                try tx.insertRefreshToken(refreshToken("r2", family: "f", sessionIDHash: "session-1", userID: userID, createdAt: t0 + 1))
            }
            let replay = try store.write { try $0.rotateRefreshToken(tokenHash: "r1", now: t0 + 2) }
            guard case let .reused(token) = replay else {
                Issue.record("expected reused, got \(replay)")
                return
            }
            let revoked = try store.write { try $0.revokeRefreshFamily(token.familyID) }
            #expect(revoked == 2)
            // A revoked family stays as a tombstone: its never-rotated token now counts as reused too.
            let afterRevocation = try store.write { try $0.rotateRefreshToken(tokenHash: "r2", now: t0 + 3) }
            guard case .reused = afterRevocation else {
                Issue.record("expected reused after revocation, got \(afterRevocation)")
                return
            }
            let revokedSession = try store.read { try $0.session(idHash: "session-1", now: t0 + 3) }
            let otherSession = try store.read { try $0.session(idHash: "session-2", now: t0 + 3) }
            #expect(revokedSession == nil)
            #expect(otherSession != nil)
        }
    }

    @Test("deleting a user removes its sessions, refresh tokens and Apple token; queued revocations stay",
          arguments: Backend.allCases)
    func deletionCascades(backend: Backend) throws {
        try withFreshStore(backend) { fixture in
            let store = fixture.store
            let userID = try signedInUser("gone", sessions: ["a", "b"], in: store)
            let keptID = try signedInUser("kept", sessions: ["c"], in: store)
            try store.write { tx in
                try tx.insertRefreshToken(refreshToken("ra", family: "f", sessionIDHash: "a", userID: userID))
                try tx.upsertAppleToken(AppleTokenRecord(userID: userID, clientID: "com.example", encryptedRefreshToken: [1, 2],
                                                         updatedAt: t0))
                _ = try tx.enqueueRevocation(clientID: "com.example", encryptedToken: [3], tokenTypeHint: "refresh_token", now: t0)
            }
            let deleted = try store.write { try $0.deleteUser(id: userID) }
            let deletedAgain = try store.write { try $0.deleteUser(id: userID) }
            #expect(deleted && !deletedAgain)
            let rotation = try store.write { try $0.rotateRefreshToken(tokenHash: "ra", now: t0) }
            #expect(rotation == .unknown)
            let leftovers = try store.read { tx in
                [try tx.session(idHash: "a", now: t0) == nil, try tx.session(idHash: "b", now: t0) == nil,
                 try tx.appleToken(userID: userID) == nil, try tx.user(id: userID) == nil,
                 try tx.session(idHash: "c", now: t0) != nil, try tx.pendingRevocationCount() == 1,
                 try tx.countUsers() == 1]
            }
            #expect(leftovers == Array(repeating: true, count: 7))
            let sessionsGone = try store.write { try $0.deleteSessions(userID: keptID) }
            #expect(sessionsGone == 1)
        }
    }

    @Test("the revocation queue: due order, limit, postponing, completing, bytes kept exactly",
          arguments: Backend.allCases)
    func revocationQueue(backend: Backend) throws {
        try withFreshStore(backend) { fixture in
            let store = fixture.store
            let everyByte = (0...255).map { UInt8($0) }
            let (first, second, later) = try store.write { tx in
                (try tx.enqueueRevocation(clientID: "a", encryptedToken: everyByte, tokenTypeHint: "refresh_token", now: t0),
                 try tx.enqueueRevocation(clientID: "b", encryptedToken: [0], tokenTypeHint: "access_token", now: t0),
                 try tx.enqueueRevocation(clientID: "c", encryptedToken: [9], tokenTypeHint: "refresh_token", now: t0 + 100))
            }
            let due = try store.read { try $0.dueRevocations(now: t0 + 50, limit: 10) }
            #expect(due.map(\.id) == [first, second])
            #expect(due.first?.encryptedToken == everyByte)
            #expect(due.first?.attempts == 0 && due.first?.lastError == nil && due.first?.nextAttemptAt == t0)
            let limited = try store.read { try $0.dueRevocations(now: t0 + 100, limit: 2) }
            #expect(limited.map(\.id) == [first, second])
            try store.write { tx in
                try tx.postponeRevocation(id: first, nextAttemptAt: t0 + 500, error: "HTTP 503")
                try tx.completeRevocation(id: second)
            }
            let afterwards = try store.read { try $0.dueRevocations(now: t0 + 500, limit: 10) }
            #expect(afterwards.map(\.id) == [later, first])
            #expect(afterwards.last?.attempts == 1 && afterwards.last?.lastError == "HTTP 503")
            let count = try store.read { try $0.pendingRevocationCount() }
            #expect(count == 2)
            let error = #expect(throws: StoreError.self) {
                try store.write { try $0.enqueueRevocation(clientID: "a", encryptedToken: [], tokenTypeHint: "x", now: t0) }
            }
            #expect(error == .invalidArgument("a revocation needs the encrypted token"))
        }
    }

    @Test("a notification jti is recorded once, also when delivered concurrently, and forgotten after 30 days",
          arguments: Backend.allCases)
    func notificationJTI(backend: Backend) throws {
        try withFreshStore(backend) { fixture in
            let store = fixture.store
            let outcomes = try race(fixture) { store in
                try store.write { try $0.recordNotification(jti: "j1", now: t0) } ? "applied" : "duplicate"
            }
            #expect(outcomes == ["applied"] + Array(repeating: "duplicate", count: Self.threads - 1))
            let notYet = try store.write { try $0.deleteExpired(now: t0 + 30 * 86_400 - 1) }
            let swept = try store.write { try $0.deleteExpired(now: t0 + 30 * 86_400) }
            let again = try store.write { try $0.recordNotification(jti: "j1", now: t0 + 30 * 86_400) }
            #expect(notYet == 0 && swept == 1 && again)
        }
    }

    @Test("the same Apple user signing in on many threads at once is created exactly once",
          arguments: Backend.allCases)
    func concurrentFirstSignIn(backend: Backend) throws {
        try withFreshStore(backend) { fixture in
            let outcomes = try race(fixture) { store in
                let (user, created) = try store.write {
                    try $0.upsertAppleUser(appleProfile(sub: "001.same", email: "a@example.com"), now: t0)
                }
                return created ? "created \(user.id)" : "found \(user.id)"
            }
            let id = try fixture.store.read { try $0.user(providerUserID: "001.same")?.id } ?? -1
            #expect(outcomes == ["created \(id)"] + Array(repeating: "found \(id)", count: Self.threads - 1))
        }
    }

    @Test("the same new member signing in on many threads at once as the service signs in (READ COMMITTED, its row read after the commit) is created once, and each session is the member's",
          arguments: Backend.allCases)
    func concurrentFirstSignInWithSessions(backend: Backend) throws {
        try withFreshStore(backend) { fixture in
            let outcomes = try race(fixture) { store in
                let idHash = UUID().uuidString
                let member = try store.write(isolation: .readCommitted) { tx in
                    let member = try tx.signInAppleUser(appleProfile(sub: "001.same", email: "a@example.com"), now: t0)
                    try tx.insertSession(idHash: idHash, of: member.reference, flow: "web", nonceVerified: true,
                                         createdAt: t0, expiresAt: t0 + 3600)
                    return member
                }
                let (user, created) = try member.get()
                let owner = try store.read { try $0.session(idHash: idHash, now: t0)?.user.id }
                return (created ? "created" : "found") + (owner == user.id ? "" : " but the session is \(String(describing: owner))'s")
            }
            #expect(outcomes.sorted() == ["created"] + Array(repeating: "found", count: Self.threads - 1))
            #expect(try fixture.store.read { try $0.countUsers() } == 1)
        }
    }

    @Test("sessions: expired at expiresAt, users by sub never by email, text kept byte for byte",
          arguments: Backend.allCases)
    func sessionsAndUsers(backend: Backend) throws {
        try withFreshStore(backend) { fixture in
            let store = fixture.store
            let name = "Zoë O'Brien\"; DROP TABLE users; -- 🍏"
            let (user, _) = try store.write {
                try $0.upsertAppleUser(appleProfile(sub: "001.a", email: "x@example.com", name: name), now: t0)
            }
            let other = try store.write { try $0.upsertAppleUser(appleProfile(sub: "001.b", email: "x@example.com"), now: t0) }
            #expect(other.created && other.user.id != user.id)
            #expect(user.displayName == name)
            try store.write { try $0.insertSession(session("s", userID: user.id, lifetime: 60)) }
            let (live, expired) = try store.read { tx in
                (try tx.session(idHash: "s", now: t0 + 59), try tx.session(idHash: "s", now: t0 + 60))
            }
            #expect(live?.user == user && live?.session.expiresAt == t0 + 60 && expired == nil)
            try store.write { try $0.setEmailForwarding(userID: user.id, isPrivateEmailEnabled: false, now: t0 + 5) }
            let updated = try store.read { try $0.user(id: user.id) }
            #expect(updated?.emailForwardingEnabled == false && updated?.updatedAt == t0 + 5)
        }
    }

    @Test("migrations: a fresh database gets every version once", arguments: Backend.allCases)
    func migrations(backend: Backend) throws {
        try withFreshStore(backend, migrated: false) { fixture in
            let first = try fixture.store.migrate()
            let again = try fixture.openAnother().migrate()
            #expect(first == Migrations.all.map(\.version))
            #expect(again == [])
        }
    }
}
