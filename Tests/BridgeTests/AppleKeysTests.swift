import AppleIDSimulator
import Foundation
import HTTPServer
import JOSE
import Testing
import TestSupport

@Suite("Apple's keys: cache, rotation, outages", .serialized)
struct AppleKeysTests {
    @Test("after Apple rotates its key, the next token verifies after one re-fetch")
    func rotation() throws {
        let harness = try BridgeHarness()
        #expect(try TestBrowser(harness).signIn(user: .ada).status == 303)
        let before = harness.simulator.jwksFetchCount
        try harness.simulator.rotateKeys()
        harness.clock.advance(by: 31)
        #expect(try TestBrowser(harness).signIn(user: .grace).status == 303)
        #expect(harness.simulator.jwksFetchCount == before + 1)
        // Cached now: more sign-ins fetch nothing.
        #expect(try TestBrowser(harness).signIn(user: .alan).status == 303)
        #expect(harness.simulator.jwksFetchCount == before + 1)
    }

    @Test("50 tokens with random unknown kids cause at most one extra fetch per 30 seconds")
    func unknownKidFlood() throws {
        let harness = try BridgeHarness()
        #expect(try TestBrowser(harness).signIn().status == 303)
        let browser = TestBrowser(harness)
        let baseline = harness.simulator.jwksFetchCount
        func flood() throws {
            let statuses = StatusList()
            let logins = try (0..<50).map { _ in try browser.openLogin() }
            let cookies = browser.cookieHeader(for: "/apple_redirect")
            let tokens = try logins.map { login in
                try harness.token(nonce: login.nonce, header: ["kid": .string(Base64URL.encode(SecureRandom.bytes(8)))])
            }
            DispatchQueue.concurrentPerform(iterations: 50) { index in
                let body = FormFields([("state", logins[index].state), ("id_token", tokens[index])]).urlEncoded
                let response = try? harness.request(method: "POST", path: "/apple_redirect",
                    headers: [("Content-Type", "application/x-www-form-urlencoded")] + cookies, body: body)
                statuses.append(response?.status ?? 0)
            }
            #expect(statuses.values.allSatisfy { $0 == 401 })
        }
        try flood()
        #expect(harness.simulator.jwksFetchCount - baseline <= 1)
        harness.clock.advance(by: 31)
        try flood()
        #expect(harness.simulator.jwksFetchCount - baseline <= 2)
        #expect(try harness.userCount() == 1)
    }

    @Test("when Apple is unreachable, the cached keys keep serving")
    func outageWithCachedKeys() throws {
        let harness = try BridgeHarness()
        #expect(try TestBrowser(harness).signIn(user: .ada).status == 303)
        harness.simulator.isUnavailable = true
        harness.clock.advance(by: 7200)  // past the cache lifetime: a refresh is attempted and fails
        let browser = TestBrowser(harness)
        let login = try browser.openLogin()
        let token = try harness.token(subject: "001234.outage.user", nonce: login.nonce) {
            $0.issuedAt = Date().addingTimeInterval(7200)  // issued "now" on the moved clock
        }
        #expect(try browser.post("/apple_redirect", form: [("state", login.state), ("id_token", token)]).status == 303)
    }

    @Test("a cold start with Apple unreachable answers 503 with a page that says so")
    func coldStartOutage() throws {
        let harness = try BridgeHarness(startSimulator: false)
        let browser = TestBrowser(harness)
        let login = try browser.openLogin()
        let token = try harness.token(nonce: login.nonce)
        let response = try browser.post("/apple_redirect", form: [("state", login.state), ("id_token", token)])
        #expect(response.status == 503)
        #expect(HTMLDocument(response.text).text.contains("could not reach Apple"))
        #expect(try harness.userCount() == 0)
        // Nothing was consumed: once Apple is back (and the retry interval passed), the same sign-in finishes.
        try harness.appleID.start()
        harness.clock.advance(by: 6)
        let retried = try browser.post("/apple_redirect", form: [("state", login.state), ("id_token", token)])
        #expect(retried.status == 303)
        #expect(try harness.userCount() == 1)
    }
}
