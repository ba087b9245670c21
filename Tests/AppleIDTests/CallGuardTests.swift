import AppleID
import AppleIDSimulator
import Foundation
import Synchronization
import Testing
import TestSupport

/// A transport whose calls are answered by a script: each call takes the next answer, or blocks until released.
final class ScriptedTransport: AppleHTTPTransport {
    enum Answer: Sendable {
        case status(Int)
        case failure(AppleHTTPError)
        /// Waits until `release()` (or 10 s), then answers 200.
        case block
        /// Sleeps this long, then answers 200.
        case slow(TimeInterval)
    }

    private let script = Mutex<[Answer]>([])
    private let calls = Mutex(0)
    private let gate = DispatchSemaphore(value: 0)

    func answer(_ answers: [Answer]) { script.withLock { $0 = answers } }
    var callCount: Int { calls.withLock { $0 } }
    func release(_ count: Int) { for _ in 0..<count { gate.signal() } }

    func get(_ url: String) throws(AppleHTTPError) -> HTTPExchange { try postForm(url, fields: []) }

    func postForm(_ url: String, fields: [(String, String)]) throws(AppleHTTPError) -> HTTPExchange {
        calls.withLock { $0 += 1 }
        let next = script.withLock { $0.isEmpty ? Answer.status(200) : $0.removeFirst() }
        switch next {
        case let .status(status): return HTTPExchange(status: status, body: Array("{}".utf8))
        case let .failure(error): throw error
        case .block:
            _ = gate.wait(timeout: .now() + 10)
            return HTTPExchange(status: 200, body: Array("{}".utf8))
        case let .slow(seconds):
            Thread.sleep(forTimeInterval: seconds)
            return HTTPExchange(status: 200, body: Array("{}".utf8))
        }
    }
}

extension AppleIDTests {
    @Suite("Calls to Apple: cap, circuit breaker, deadline")
    struct CallGuardTests {
        let clock = TestClock(frozenAt: Date())
        let scripted = ScriptedTransport()

        func guarded(maxInFlight: Int = 32, threshold: Int = 3, callTimeout: TimeInterval = 5) -> GuardedTransport {
            var settings = AppleCallGuard.Settings()
            settings.maxInFlight = maxInFlight
            settings.failureThreshold = threshold
            settings.coolDown = 10
            return GuardedTransport(scripted, guard: AppleCallGuard(settings: settings, clock: clock.clock),
                                    callTimeout: callTimeout)
        }

        func notAttempted(_ body: () throws(AppleHTTPError) -> HTTPExchange) -> Bool {
            do {
                _ = try body()
                return false
            } catch {
                if case .notAttempted = error { return true }
                return false
            }
        }

        @Test("beyond the cap a call fails at once without reaching Apple; room comes back when a call ends")
        func cap() throws {
            let transport = guarded(maxInFlight: 2)
            scripted.answer([.block, .block])
            let group = DispatchGroup()
            for _ in 0..<2 {
                group.enter()
                Thread { _ = try? transport.postForm("https://apple.test/auth/token", fields: []); group.leave() }.start()
            }
            // The guard counts a call before the scripted Apple records it: on a loaded machine wait for both.
            while transport.callGuard.inFlight < 2 || scripted.callCount < 2 { Thread.sleep(forTimeInterval: 0.01) }
            let start = Date()
            let refused = notAttempted { () throws(AppleHTTPError) in try transport.postForm("https://apple.test/auth/token", fields: []) }
            #expect(refused)
            #expect(Date().timeIntervalSince(start) < 0.5)
            #expect(scripted.callCount == 2)
            scripted.release(2)
            group.wait()
            let answered = try transport.postForm("https://apple.test/auth/token", fields: [])
            #expect(answered.status == 200)
        }

        @Test("after `threshold` failures in a row the breaker refuses calls; after the cool-down one probe decides")
        func breaker() throws {
            let transport = guarded(threshold: 3)
            let url = "https://apple.test/auth/token"
            scripted.answer([.failure(.timedOut), .status(503), .failure(.unreachable("refused")), .status(502)])
            for _ in 0..<3 { _ = try? transport.postForm(url, fields: []) }
            let refusedWhileOpen = notAttempted { () throws(AppleHTTPError) in try transport.postForm(url, fields: []) }
            #expect(refusedWhileOpen)
            #expect(scripted.callCount == 3)
            #expect(transport.callGuard.isOpen("/auth/token"))
            #expect(transport.callGuard.admits("/auth/keys"))  // each endpoint has its own breaker

            clock.advance(by: 10)
            let probe = try transport.postForm(url, fields: [])  // the probe fails (502): open again
            #expect(probe.status == 502)
            let refusedAfterProbe = notAttempted { () throws(AppleHTTPError) in try transport.postForm(url, fields: []) }
            #expect(refusedAfterProbe)
            #expect(scripted.callCount == 4)

            clock.advance(by: 10)
            #expect(try transport.postForm(url, fields: []).status == 200)  // a good probe closes it
            #expect(try transport.postForm(url, fields: []).status == 200)
            #expect(!transport.callGuard.isOpen("/auth/token"))
        }

        @Test("every call is reported with its endpoint, how it ended and how long it was waited for; a refused one untimed")
        func observed() throws {
            let records = Mutex<[AppleCallRecord]>([])
            var settings = AppleCallGuard.Settings()
            settings.failureThreshold = 2
            let transport = GuardedTransport(scripted, guard: AppleCallGuard(settings: settings, clock: clock.clock),
                                             callTimeout: 5) { record in records.withLock { $0.append(record) } }
            let url = "https://apple.test/auth/token"
            scripted.answer([.status(200), .status(400), .slow(0.5), .status(503)])
            _ = try transport.postForm(url, fields: [])
            _ = try transport.postForm(url, fields: [])
            _ = try? transport.postForm(url, fields: [], deadline: Date().addingTimeInterval(0.1))
            _ = try transport.postForm(url, fields: [])  // the second failure in a row opens the breaker
            _ = try? transport.postForm(url, fields: [])
            let seen = records.withLock { $0 }
            #expect(seen.map(\.result) == [.ok, .clientError, .timeout, .serverError, .refused])
            #expect(seen.allSatisfy { $0.endpoint == "/auth/token" })
            #expect(seen.dropLast().allSatisfy { ($0.seconds ?? -1) >= 0 })
            #expect((seen[2].seconds ?? 0) >= 0.09 && (seen[2].seconds ?? 1) < 0.45)
            #expect(seen.last?.seconds == nil)
        }

        @Test("a caller stops waiting at its deadline; the call still counts in flight until it really ends")
        func deadline() throws {
            let transport = guarded(callTimeout: 5)
            scripted.answer([.slow(1.5)])
            let start = Date()
            #expect(throws: AppleHTTPError.self) {
                try transport.postForm("https://apple.test/auth/token", fields: [], deadline: Date().addingTimeInterval(0.2))
            }
            #expect(Date().timeIntervalSince(start) < 1)
            #expect(transport.callGuard.inFlight == 1)
            Thread.sleep(forTimeInterval: 2)
            #expect(transport.callGuard.inFlight == 0)
        }

        @Test("the token client reports a refused call as notAttempted, and does not retry it")
        func tokenClientNotAttempted() throws {
            let fixture = try SimulatorFixture()
            var settings = AppleCallGuard.Settings()
            settings.maxInFlight = 0
            let callGuard = AppleCallGuard(settings: settings)
            let client = AppleTokenClient(baseURL: fixture.baseURL, transport: GuardedTransport(fixture.transport, guard: callGuard),
                                          secrets: ClientSecretProvider(key: fixture.key), verifier: fixture.verifier,
                                          callGuard: callGuard, sleep: { _ in })
            #expect(!client.wouldCall(AppleTokenClient.tokenPath))
            do {
                _ = try client.exchange(code: "c", clientID: SimulatorFixture.bundleID, redirectURI: nil, expectedSubject: "s")
                Issue.record("the exchange should have been refused")
            } catch {
                guard case .notAttempted = error else {
                    Issue.record("expected notAttempted, got \(error)")
                    return
                }
            }
            #expect(fixture.transport.posts.isEmpty)
        }

        @Test("the key cache says whether it can answer without fetching")
        func keyCacheAnswersWithoutFetching() throws {
            let fixture = try SimulatorFixture()
            let kid = fixture.simulator.currentKeyID
            #expect(!fixture.keys.answersWithoutFetching(kid))  // cold: the first use fetches
            #expect(fixture.keys.prefetch())
            #expect(fixture.keys.answersWithoutFetching(kid))
            // An unknown kid right after a fetch is refused from the cache (re-fetches are rate limited).
            #expect(fixture.keys.answersWithoutFetching("unknown-kid"))
            let token = try fixture.simulator.mintIdentityToken(IdentityTokenClaims(audience: SimulatorFixture.bundleID,
                                                                                   subject: "s"))
            #expect(fixture.verifier.verifiesWithoutFetching(token))
            #expect(fixture.verifier.verifiesWithoutFetching("not a token"))
        }
    }
}

extension AppleIDTests.CallGuardTests {
    /// A token for subject `s`, signed by the simulator's current key unless `keyID` names another.
    private func mintToken(_ fixture: SimulatorFixture, audience: String = SimulatorFixture.bundleID,
                       keyID: String? = nil) throws -> String {
        try fixture.simulator.mintIdentityToken(IdentityTokenClaims(audience: audience, subject: "s"),
                                                headerOverrides: keyID.map { ["kid": .string($0)] } ?? [:])
    }

    @Test("verifying with held keys only never fetches: a cold cache answers at once, without an identity")
    func heldKeysOnly() throws {
        let fixture = try SimulatorFixture()
        let token = try mintToken(fixture)
        #expect(try fixture.verifier.verifyIfKeyHeld(token) == nil)
        #expect(fixture.keys.fetches == 0)
        #expect(try fixture.verifier.verify(token).subject == "s")
        #expect(try fixture.verifier.verifyIfKeyHeld(token)?.subject == "s")
        #expect(fixture.keys.fetches == 1)
    }

    @Test("verifying where no one may wait: nil when the key must be fetched, the identity once it is held, refusals as ever")
    func verifyIfKeyHeld() throws {
        let fixture = try SimulatorFixture()
        let token = try mintToken(fixture)
        // Cold: the first use would fetch, so the caller is told to verify where fetching is allowed; nothing fetched.
        #expect(try fixture.verifier.verifyIfKeyHeld(token) == nil)
        #expect(fixture.keys.fetches == 0)
        // A token refused before any key is needed is refused here, not sent elsewhere.
        #expect(throws: TokenRejection.self) { try fixture.verifier.verifyIfKeyHeld("not a token") }
        #expect(fixture.keys.fetches == 0)
        #expect(fixture.keys.prefetch())
        #expect(try fixture.verifier.verifyIfKeyHeld(token)?.subject == "s")
        // A key held and fresh, but a claim wrong: the rejection, not nil.
        let wrongAudience = try mintToken(fixture, audience: "com.example.other")
        #expect(throws: TokenRejection.self) { try fixture.verifier.verifyIfKeyHeld(wrongAudience) }
        // An unknown kid right after a fetch is refused from the cache (re-fetches are rate limited).
        let unknownKey = try mintToken(fixture, keyID: "unknown-kid")
        #expect(throws: TokenRejection.unknownKeyID("unknown-kid")) { try fixture.verifier.verifyIfKeyHeld(unknownKey) }
        #expect(fixture.keys.fetches == 1)
    }
}

extension AppleIDTests.CallGuardTests {
    @Test("verifying where no one may wait never fetches, even when the key's freshness runs out while it is looked up")
    func heldKeyExpiringMeanwhileIsNotFetched() throws {
        let fixture = try SimulatorFixture()
        // Every read of this clock after `ticking` moves it on a second: the key is fresh at the first read and stale
        // at the next, as when a cache's lifetime ends between two looks at it.
        let start = Date()
        let clock = Mutex<(now: Date, ticking: Bool)>((start, false))
        let wallClock = WallClock {
            clock.withLock { state in
                defer { if state.ticking { state.now.addTimeInterval(1) } }
                return state.now
            }
        }
        var settings = JWKSCache.Settings()
        (settings.defaultLifetime, settings.minimumLifetime, settings.maximumLifetime) = (100, 100, 100)
        settings.minimumRefetchInterval = 10
        let keys = JWKSCache(url: fixture.baseURL + "/auth/keys", transport: fixture.transport, clock: wallClock,
                             settings: settings)
        let verifier = IdentityTokenVerifier(
            policy: VerificationPolicy(issuers: [fixture.simulator.issuer], servicesID: SimulatorFixture.servicesID,
                                       bundleIDs: [SimulatorFixture.bundleID]),
            keys: keys)
        #expect(keys.prefetch())
        clock.withLock { $0 = (start.addingTimeInterval(99.5), true) }  // fresh until start + 100
        let identity = try verifier.verifyIfKeyHeld(try mintToken(fixture))
        #expect(identity?.subject == "s")
        #expect(keys.fetches == 1)
    }
}
