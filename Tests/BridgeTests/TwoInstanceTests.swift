import AppleIDSimulator
import Bridge
import Foundation
import JOSE
import JSON
@testable import Storage
import Synchronization
import Testing
import TestSupport

/// Two instances of the server (in process, each with its own listener, pool, rate limiter and sweeper) on one
/// PostgreSQL database, with one secret key and one stand-in for Apple, as behind a load balancer.
@Suite("Two instances on one PostgreSQL", .serialized)
struct TwoInstanceTests {
    struct Pair {
        let a: BridgeHarness
        let b: BridgeHarness
    }

    /// A fresh database and two instances on it; A's simulator is Apple for both (and knows A's client key).
    func withPair(signInRequestsPerMinute: Int = 6000, settings: [String: String] = [:],
                  _ body: (Pair) throws -> Void) throws {
        let admin = try PostgresURL(try DatabaseOutageTests.required("BRIDGE_TEST_POSTGRES_URL"))
        let name = "bridge_pair_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let connection = try PostgresConnection(conninfo: admin.connectionString, defaults: [:])
        try connection.execute("CREATE DATABASE \(name)")
        defer { try? connection.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
        let key = try TestClientKey(directory: try keyDirectory())
        var shared = TestClientKey.settings(key.path).merging(settings) { _, new in new }
        shared["BRIDGE_DATABASE"] = try admin.withDatabase(name).connectionString
        shared["BRIDGE_DATABASE_POOL_SIZE"] = "4"
        shared["BRIDGE_SECRET_KEY"] = Data(SecureRandom.bytes(32)).base64EncodedString()
        let a = try BridgeHarness(shared, signInRequestsPerMinute: signInRequestsPerMinute)
        a.simulator.registerClientKey(teamID: TestClientKey.teamID, keyID: TestClientKey.keyID, publicKey: key.key.publicKey)
        shared["APPLE_ID_URL"] = "http://127.0.0.1:\(a.simulatorPort)"
        let b = try BridgeHarness(shared, startSimulator: false, signInRequestsPerMinute: signInRequestsPerMinute)
        try body(Pair(a: a, b: b))
    }

    /// Lets a value that is only ever used by one thread at a time cross to another thread.
    struct Handed<T>: @unchecked Sendable { let value: T }

    /// Runs each closure on its own thread, released together; returns their results in order (nil for a throw).
    func atOnce<T>(_ bodies: [() throws -> T]) -> [T?] {
        let results = Mutex<[Int: Handed<T?>]>([:])
        let ready = DispatchGroup()
        let go = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for (index, body) in bodies.enumerated() {
            let handed = Handed(value: body)
            ready.enter()
            done.enter()
            Thread.detachNewThread {
                ready.leave()
                go.wait()
                let result = Handed(value: try? handed.value())
                results.withLock { $0[index] = result }
                done.leave()
            }
        }
        ready.wait()
        for _ in bodies { go.signal() }
        done.wait()
        return results.withLock { dictionary in bodies.indices.map { dictionary[$0]?.value ?? nil } }
    }

    /// A browser of instance `to` holding the cookies `from` has.
    func moved(_ from: TestBrowser, to harness: BridgeHarness) -> TestBrowser {
        let browser = TestBrowser(harness)
        for (name, cookie) in from.cookies { browser.set(name, cookie) }
        return browser
    }

    @Test("/login on A, Apple's form_post on B: the session works on both")
    func loginOnOneCallbackOnOther() throws {
        try withPair { pair in
            let onA = TestBrowser(pair.a)
            let fields = try onA.authorizeAtApple(try onA.openLogin())
            let onB = moved(onA, to: pair.b)
            let callback = try onB.post("/apple_redirect", form: fields)
            #expect(callback.status == 303)
            #expect(try onB.get("/session").status == 200)
            #expect(try moved(onB, to: pair.a).get("/session").status == 200)
        }
    }

    @Test("/login on A, the callback spent on B, then replayed on A (which remembers the attempt it stored): refused as already used, twice")
    func spentElsewhereReplayedHere() throws {
        try withPair { pair in
            let onA = TestBrowser(pair.a)
            let fields = try onA.authorizeAtApple(try onA.openLogin())
            #expect(try moved(onA, to: pair.b).post("/apple_redirect", form: fields).status == 303)
            for _ in 0..<2 {
                let replay = try onA.post("/apple_redirect", form: fields)
                #expect(replay.status == 400)
                #expect(HTMLDocument(replay.text).text.contains("already used"))
            }
            #expect(try pair.a.userCount() == 1)
        }
    }

    @Test("the same state posted to A and B at once signs in exactly once")
    func sameStateOnBoth() throws {
        try withPair { pair in
            let onA = TestBrowser(pair.a)
            let fields = try onA.authorizeAtApple(try onA.openLogin())
            let onB = moved(onA, to: pair.b)
            let statuses = atOnce([{ try onA.post("/apple_redirect", form: fields).status },
                                   { try onB.post("/apple_redirect", form: fields).status }]).map { $0 ?? -1 }
            #expect(statuses.sorted() == [303, 400] || statuses.sorted() == [303, 409], "\(statuses)")
            #expect(try pair.a.userCount() == 1)
        }
    }

    @Test("one identity token on A and B at once: one sign-in; one server nonce in two tokens: one sign-in")
    func tokenAndNonceOnBoth() throws {
        try withPair { pair in
            let token = try pair.a.token(audience: BridgeHarness.bundleID, subject: "001.pair.token", nonce: nil)
            let body = pair.a.json(["idToken": .string(token)])
            let (a, b) = (pair.a, pair.b)
            let statuses = atOnce([{ try a.api("/api/auth/apple", json: body).status },
                                   { try b.api("/api/auth/apple", json: body).status }]).map { $0 ?? -1 }
            #expect(statuses.sorted() == [200, 409], "\(statuses)")

            let nonce = try #require(try a.api("/api/auth/nonce").body["nonce"]?.stringValue)
            let hashed = SHA256.hexDigest(Array(nonce.utf8))
            let first = try a.token(audience: BridgeHarness.bundleID, subject: "001.pair.nonce", nonce: hashed)
            let second = try a.token(audience: BridgeHarness.bundleID, subject: "001.pair.nonce2", nonce: hashed)
            let withNonce = atOnce([
                { try a.api("/api/auth/apple", json: a.json(["idToken": .string(first), "nonce": .string(nonce)])).status },
                { try b.api("/api/auth/apple", json: b.json(["idToken": .string(second), "nonce": .string(nonce)])).status },
            ]).map { $0 ?? -1 }
            #expect(withNonce.sorted() == [200, 409], "\(withNonce)")
        }
    }

    @Test("sign-ins on A and B at once, of many people and of one on several browsers, run no write twice")
    func concurrentSignInsNeedNoRetry() throws {
        try withPair { pair in
            let (a, b) = (pair.a, pair.b)
            // App sign-ins of different people (each also spends the one client's shared rate-limit bucket), and
            // web sign-ins of one person from four browsers (one member row), all released together.
            var signIns: [() throws -> Int] = try (0..<32).map { index in
                let harness = index.isMultiple(of: 2) ? a : b
                let token = try a.token(audience: BridgeHarness.bundleID, subject: "001.pair.many.\(index)", nonce: nil)
                let body = harness.json(["idToken": .string(token)])
                return { try harness.api("/api/auth/apple", json: body).status }
            }
            for index in 0..<4 {
                let onA = TestBrowser(a)  // A's stand-in is Apple for both
                let fields = try onA.authorizeAtApple(try onA.openLogin())
                let browser = index.isMultiple(of: 2) ? onA : moved(onA, to: b)
                signIns.append { try browser.post("/apple_redirect", form: fields).status }
            }
            let statuses = atOnce(signIns).map { $0 ?? -1 }
            #expect(statuses == Array(repeating: 200, count: 32) + Array(repeating: 303, count: 4), "\(statuses)")
            #expect(try a.userCount() == 33)
            // At SERIALIZABLE, transactions that touched no common row still conflicted over index pages and ran again.
            let retries = (a.app.store.writeRetries + b.app.store.writeRetries).filter { $0.count > 0 }
            #expect(retries.isEmpty, "\(retries)")
            // Every sign-in, rate-limit admission and login attempt went through the group commit, alone or together.
            let grouped = [a, b].map(\.app.store.groupCommitCounts)
            let writes: Int = grouped.map(\.writes).reduce(0, +)
            let expected = 32 * 2 + 4 * 2  // each app sign-in and its admission; each web login attempt and sign-in
            #expect(writes >= expected, "\(grouped)")
            #expect(grouped.allSatisfy { $0.commits >= 1 && $0.commits <= $0.writes }, "\(grouped)")
        }
    }

    @Test("one refresh token on A and B at once: exactly one rotation, and the reuse ends the family")
    func refreshOnBoth() throws {
        try withPair { pair in
            let (a, b) = (pair.a, pair.b)
            let token = try a.token(audience: BridgeHarness.bundleID, subject: "001.pair.refresh", nonce: nil)
            let signedIn = try a.api("/api/auth/apple", json: a.json(["idToken": .string(token)]))
            let refresh = try #require(signedIn.body["refreshToken"]?.stringValue)
            let body = a.json(["refreshToken": .string(refresh)])
            let results = atOnce([{ try a.api("/api/auth/refresh", json: body) }, { try b.api("/api/auth/refresh", json: body) }])
                .compactMap { $0 }
            #expect(results.map(\.status).sorted() == [200, 401])
            let winner = try #require(results.first { $0.status == 200 }?.body["refreshToken"]?.stringValue)
            #expect(results.first { $0.status == 401 }?.body["error"]?.stringValue == "refresh_token_reused")
            // The loser presented a used token: the whole family is revoked, the winner's new token too.
            let afterReuse = try b.api("/api/auth/refresh", json: b.json(["refreshToken": .string(winner)]))
            #expect(afterReuse.status == 401)
        }
    }

    @Test("a notification delivered to A and B at once is applied once per jti")
    func notificationOnBoth() throws {
        try withPair { pair in
            let (a, b) = (pair.a, pair.b)
            #expect(try TestBrowser(a).signIn(user: .ada).status == 303)
            let event = try a.simulator.mintNotification(type: "email-disabled", subject: SimulatedUser.ada.sub,
                                                         audience: BridgeHarness.servicesID)
            let outcomes = atOnce([{ try a.api("/apple/notifications", json: event) }, { try b.api("/apple/notifications", json: event) }])
                .compactMap { $0 }
            #expect(outcomes.map(\.status) == [200, 200])
            #expect(outcomes.compactMap { $0.body["status"]?.stringValue }.sorted() == ["applied", "duplicate"])
        }
    }

    @Test("every queued revocation is sent to Apple exactly once with both instances working the queue")
    func revocationsOnce() throws {
        try withPair { pair in
            let (a, b) = (pair.a, pair.b)
            let users: [SimulatedUser] = [.ada, .alan]
            var accessTokens: [String] = []
            for user in users {
                let signIn = try a.nativeSignIn(user: user)
                #expect(signIn.status == 200)
                accessTokens.append(try #require(signIn.body["accessToken"]?.stringValue))
            }
            a.simulator.isUnavailable = true
            for access in accessTokens {
                #expect(try a.api("/api/me", method: "DELETE", bearer: access).body["appleRevocation"]?.stringValue == "queued")
            }
            a.simulator.isUnavailable = false
            a.clock.advance(by: 31)
            b.clock.advance(by: 31)
            let done = atOnce([{ a.app.processDueRevocations() }, { b.app.processDueRevocations() },
                               { a.app.processDueRevocations() }, { b.app.processDueRevocations() }])
                .compactMap { $0 }
            #expect(done.reduce(0, +) == users.count)
            #expect(a.simulator.revokedTokens.count == users.count)
            #expect(try a.app.store.read { try $0.pendingRevocationCount() } == 0)
        }
    }

    @Test("the per-client rate limit holds across instances: spreading requests gains nothing")
    func rateLimitAcrossInstances() throws {
        try withPair(signInRequestsPerMinute: 6) { pair in  // burst 10
            var admitted = 0
            for index in 0..<20 {
                let instance = index % 2 == 0 ? pair.a : pair.b
                let response = try instance.request(method: "POST", path: "/api/auth/nonce",
                                                    headers: [("X-Forwarded-For", "203.0.113.50")])
                if response.status == 200 { admitted += 1 }
            }
            #expect(admitted == 10)
        }
    }
}
