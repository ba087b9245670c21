import AppleIDSimulator
import Foundation
import HTTPServer
import JOSE
import JSON
import Testing
import TestSupport
import WebRoutes

/// Every way a callback can be wrong. After each: the right status, a page that says why in plain words,
/// no session cookie, and no new user.
@Suite("Callback rejections", .serialized)
struct CallbackRejectionTests {
    /// Opens a login in a fresh browser and posts `fields(login)` as Apple would.
    /// `reason` is the rejection's code, which the page carries as `data-reason` (its words are for people).
    func rejected(_ harness: BridgeHarness, status: Int, heading: String, reason: String? = nil,
                  fields: (TestBrowser.LoginPage) throws -> [(String, String)]) throws {
        let browser = TestBrowser(harness)
        let login = try browser.openLogin()
        let usersBefore = try harness.userCount()
        let response = try browser.post("/apple_redirect", form: try fields(login))
        #expect(response.status == status)
        #expect(response.setCookieHeader("asb_session") == nil)
        let page = HTMLDocument(response.text)
        #expect(page.first("//h1")?.text.contains(heading) == true, "heading was: \(page.first("//h1")?.text ?? "none")")
        if let reason { #expect(page.first("//p[@class='status-code']")?.attributes["data-reason"] == reason) }
        #expect(!response.text.contains("eyJ"), "the page must not echo a token")
        #expect(try harness.userCount() == usersBefore)
        #expect(try browser.get("/session").status == 303)
    }

    let verifyHeading = "We could not verify your Apple sign-in"

    func webToken(_ harness: BridgeHarness, _ login: TestBrowser.LoginPage, code: String? = nil,
                  adjust: (inout IdentityTokenClaims) -> Void = { _ in }, header: [String: JSONValue] = [:]) throws -> String {
        try harness.token(nonce: login.nonce, code: code, adjust: adjust, header: header)
    }

    @Test("alg none is refused before any crypto")
    func algNone() throws {
        let harness = try BridgeHarness()
        try rejected(harness, status: 401, heading: verifyHeading, reason: "algorithm_not_allowed") { login in
            let header = Base64URL.encode(Array(#"{"alg":"none","kid":"x"}"#.utf8))
            let claims = Base64URL.encode(Array("{\"iss\":\"https://appleid.apple.com\",\"aud\":\"\(BridgeHarness.servicesID)\",\"sub\":\"evil\",\"nonce\":\"\(login.nonce)\",\"exp\":\(Int(Date().timeIntervalSince1970) + 600),\"iat\":\(Int(Date().timeIntervalSince1970))}".utf8))
            return [("state", login.state), ("id_token", "\(header).\(claims).")]
        }
    }

    @Test("HS256 signed with Apple's public key is refused")
    func hs256KeyConfusion() throws {
        let harness = try BridgeHarness()
        try rejected(harness, status: 401, heading: verifyHeading, reason: "algorithm_not_allowed") { login in
            let jwks = harness.simulator.jwks.serialized()
            let header = Base64URL.encode(Array("{\"alg\":\"HS256\",\"kid\":\"\(harness.simulator.currentKeyID)\"}".utf8))
            let claims = Base64URL.encode(Array("{\"iss\":\"https://appleid.apple.com\",\"aud\":\"\(BridgeHarness.servicesID)\",\"sub\":\"evil\",\"nonce\":\"\(login.nonce)\",\"exp\":\(Int(Date().timeIntervalSince1970) + 600),\"iat\":\(Int(Date().timeIntervalSince1970))}".utf8))
            let mac = HMACSHA256.authenticate(key: Array(jwks.utf8), message: Array("\(header).\(claims)".utf8))
            return [("state", login.state), ("id_token", "\(header).\(claims).\(Base64URL.encode(mac))")]
        }
    }

    @Test("a bad signature is refused")
    func badSignature() throws {
        let harness = try BridgeHarness()
        try rejected(harness, status: 401, heading: verifyHeading, reason: "bad_signature") { login in
            let token = try webToken(harness, login)
            var parts = token.split(separator: ".").map(String.init)
            var signature = Base64URL.decode(parts[2])!
            signature[10] ^= 0x01
            parts[2] = Base64URL.encode(signature)
            return [("state", login.state), ("id_token", parts.joined(separator: "."))]
        }
    }

    @Test("a signature over altered claims is refused")
    func alteredClaims() throws {
        let harness = try BridgeHarness()
        try rejected(harness, status: 401, heading: verifyHeading, reason: "bad_signature") { login in
            let token = try webToken(harness, login)
            let other = try webToken(harness, login) { $0.subject = "someone.else" }
            let parts = token.split(separator: ".")
            let otherParts = other.split(separator: ".")
            return [("state", login.state), ("id_token", "\(parts[0]).\(otherParts[1]).\(parts[2])")]
        }
    }

    @Test("an unknown kid is refused after one re-fetch of Apple's keys")
    func unknownKid() throws {
        let harness = try BridgeHarness()
        #expect(try TestBrowser(harness).signIn().status == 303)
        let fetchesBefore = harness.simulator.jwksFetchCount
        harness.clock.advance(by: 31)
        try rejected(harness, status: 401, heading: verifyHeading, reason: "unknown_kid") { login in
            [("state", login.state), ("id_token", try webToken(harness, login, header: ["kid": .string("unknown-kid")]))]
        }
        #expect(harness.simulator.jwksFetchCount == fetchesBefore + 1)
    }

    @Test("a wrong issuer is refused")
    func wrongIssuer() throws {
        let harness = try BridgeHarness()
        try rejected(harness, status: 401, heading: verifyHeading, reason: "wrong_issuer") { login in
            [("state", login.state), ("id_token", try webToken(harness, login) { $0.issuer = "https://evil.example" })]
        }
    }

    @Test("a token for another client is refused")
    func wrongAudience() throws {
        let harness = try BridgeHarness()
        try rejected(harness, status: 401, heading: verifyHeading, reason: "wrong_audience") { login in
            [("state", login.state), ("id_token", try webToken(harness, login) { $0.audience = "com.other.web" })]
        }
    }

    @Test("a token naming several audiences is refused, even when one is ours")
    func severalAudiences() throws {
        let harness = try BridgeHarness()
        try rejected(harness, status: 401, heading: verifyHeading, reason: "wrong_audience") { login in
            [("state", login.state), ("id_token", try webToken(harness, login) {
                $0.extra["aud"] = .array([.string(BridgeHarness.servicesID), "com.attacker.app"])
            })]
        }
    }

    @Test("an expired token is refused")
    func expired() throws {
        let harness = try BridgeHarness()
        try rejected(harness, status: 401, heading: verifyHeading, reason: "token_expired") { login in
            [("state", login.state), ("id_token", try webToken(harness, login) {
                $0.issuedAt = Date().addingTimeInterval(-900)
                $0.expiresIn = 600
            })]
        }
    }

    @Test("a token issued in the future is refused")
    func issuedInFuture() throws {
        let harness = try BridgeHarness()
        try rejected(harness, status: 401, heading: verifyHeading, reason: "issued_in_future") { login in
            [("state", login.state), ("id_token", try webToken(harness, login) { $0.issuedAt = Date().addingTimeInterval(300) })]
        }
    }

    @Test("a token without a subject is refused")
    func missingSubject() throws {
        let harness = try BridgeHarness()
        try rejected(harness, status: 401, heading: verifyHeading, reason: "missing_subject") { login in
            [("state", login.state), ("id_token", try webToken(harness, login) { $0.removed = ["sub"] })]
        }
    }

    @Test("a nonce of another sign-in is refused")
    func nonceMismatch() throws {
        let harness = try BridgeHarness()
        try rejected(harness, status: 401, heading: verifyHeading, reason: "nonce_mismatch") { login in
            [("state", login.state), ("id_token", try harness.token(nonce: "another-nonce"))]
        }
    }

    @Test("a Services-ID token without a nonce is refused")
    func servicesIDWithoutNonce() throws {
        let harness = try BridgeHarness()
        try rejected(harness, status: 401, heading: verifyHeading, reason: "missing_nonce") { login in
            [("state", login.state), ("id_token", try harness.token(nonce: nil))]
        }
    }

    @Test("a c_hash that does not match the code is refused")
    func codeHashMismatch() throws {
        let harness = try BridgeHarness()
        try rejected(harness, status: 401, heading: verifyHeading, reason: "code_hash_mismatch") { login in
            [("state", login.state), ("code", "the-real-code"), ("id_token", try webToken(harness, login, code: "another-code"))]
        }
    }

    @Test("a garbage token is refused")
    func garbageToken() throws {
        let harness = try BridgeHarness()
        try rejected(harness, status: 401, heading: verifyHeading, reason: "malformed_token") { login in
            [("state", login.state), ("id_token", "this-is-not-a-token")]
        }
    }

    @Test("a replayed state is refused and the first session stands")
    func replayedState() throws {
        let harness = try BridgeHarness()
        let browser = TestBrowser(harness)
        let login = try browser.openLogin()
        let fields = try browser.authorizeAtApple(login)
        let cookies = browser.cookieHeader(for: "/apple_redirect")
        #expect(try browser.post("/apple_redirect", form: fields).status == 303)
        let replay = try harness.request(method: "POST", path: "/apple_redirect",
                                               headers: [("Content-Type", "application/x-www-form-urlencoded")] + cookies,
                                               body: FormFields(fields).urlEncoded)
        #expect(replay.status == 400)
        #expect(replay.setCookieHeader("asb_session") == nil)
        #expect(HTMLDocument(replay.text).text.contains("already used"))
        #expect(try harness.userCount() == 1)
    }

    @Test("a state spent on this instance is refused as used before the token that comes with it is looked at")
    func spentStateRefusedFirst() throws {
        let harness = try BridgeHarness()
        let browser = TestBrowser(harness)
        let fields = try browser.authorizeAtApple(try browser.openLogin())
        #expect(try browser.post("/apple_redirect", form: fields).status == 303)
        let elsewhere = TestBrowser(harness)
        for (name, cookie) in browser.cookies where name.hasPrefix("asb_bind_") { elsewhere.set(name, cookie) }
        let replay = try elsewhere.post("/apple_redirect", form: fields.replacing("id_token", with: "this-is-not-a-token"))
        #expect(replay.status == 400)
        #expect(HTMLDocument(replay.text).text.contains("already used"))
    }

    @Test("posted again by the browser it signed in (back button, second tap), a callback lands where the first did and writes nothing; without that browser's session it is refused as used")
    func repeatedPostLands() throws {
        let harness = try BridgeHarness(["BRIDGE_RETURN_URLS": "https://app.example.com/*"])
        let browser = TestBrowser(harness)
        let fields = try browser.authorizeAtApple(try browser.openLogin("/login?return_to=https%3A%2F%2Fapp.example.com%2Forders"))
        let first = try browser.post("/apple_redirect", form: fields)
        #expect(first.status == 303 && first.header("Location") == "https://app.example.com/orders")
        let again = try browser.post("/apple_redirect", form: fields)
        #expect(again.status == 303 && again.header("Location") == "https://app.example.com/orders")
        #expect(again.setCookieHeader("asb_session") == nil)
        // A token that would not verify is not looked at: nothing of the repeat is used.
        let garbled = try browser.post("/apple_redirect", form: fields.replacing("id_token", with: "not-a-token"))
        #expect(garbled.status == 303)
        let metrics = try harness.request(path: "/metrics").text
        #expect(metrics.split(separator: "\n").contains("bridge_sign_ins_total{flow=\"web\"} 1"))
        #expect(try harness.userCount() == 1)
        // Signed out meanwhile: the repeat is the used sign-in it is.
        browser.forget("asb_session")
        let signedOut = try browser.post("/apple_redirect", form: fields)
        #expect(signedOut.status == 400 && HTMLDocument(signedOut.text).text.contains("already used"))
    }

    @Test("concurrent posts of one callback: exactly one session")
    func concurrentCallbacks() throws {
        let harness = try BridgeHarness()
        let browser = TestBrowser(harness)
        let login = try browser.openLogin()
        let fields = try browser.authorizeAtApple(login)
        let headers = [("Content-Type", "application/x-www-form-urlencoded")] + browser.cookieHeader(for: "/apple_redirect")
        let body = FormFields(fields).urlEncoded
        let statuses = StatusList()
        DispatchQueue.concurrentPerform(iterations: 6) { _ in
            let response = try? harness.request(method: "POST", path: "/apple_redirect",
                                                      headers: headers, body: body)
            statuses.append(response?.status ?? 0)
        }
        #expect(statuses.values.filter { $0 == 303 }.count == 1)
        #expect(statuses.values.filter { $0 == 400 }.count == 5)
    }

    @Test("a state started in another browser is refused with 403")
    func otherBrowser() throws {
        let harness = try BridgeHarness()
        let victim = TestBrowser(harness)
        let login = try victim.openLogin()
        let fields = try victim.authorizeAtApple(login)
        let attacker = TestBrowser(harness)
        _ = try attacker.openLogin()  // the attacker's browser has a binding cookie of its own
        let response = try attacker.post("/apple_redirect", form: fields)
        #expect(response.status == 403)
        #expect(HTMLDocument(response.text).text.contains("another browser"))
        #expect(try harness.userCount() == 0)
        // The victim can still finish: nothing was consumed.
        #expect(try victim.post("/apple_redirect", form: fields).status == 303)
    }

    @Test("a forged binding cookie is refused with 403")
    func forgedBindingCookie() throws {
        let harness = try BridgeHarness()
        let browser = TestBrowser(harness)
        let login = try browser.openLogin()
        let fields = try browser.authorizeAtApple(login)
        let name = try #require(browser.cookies.keys.first { $0.hasPrefix("asb_bind_") })
        let response = try harness.request(
            method: "POST", path: "/apple_redirect",
            headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Cookie", "\(name)=forged")],
            body: FormFields(fields).urlEncoded)
        #expect(response.status == 403)
    }

    @Test("a cancelled sign-in shows a friendly page and writes nothing")
    func cancelled() throws {
        let harness = try BridgeHarness()
        let browser = TestBrowser(harness)
        let login = try browser.openLogin()
        let fields = try browser.authorizeAtApple(login, cancel: true)
        #expect(fields.value("error") == "user_cancelled_authorize")
        let response = try browser.post("/apple_redirect", form: fields)
        #expect(response.status == 200)
        let page = HTMLDocument(response.text)
        #expect(page.first("//h1")?.text.contains("Sign-in cancelled") == true)
        #expect(page.first("//a[@href='/login']") != nil)
        #expect(response.setCookieHeader("asb_session") == nil)
        #expect(try harness.userCount() == 0)
    }

    @Test("missing, unknown and expired states are refused with 400")
    func badStates() throws {
        let harness = try BridgeHarness()
        try rejected(harness, status: 400, heading: "cannot be finished") { login in
            [("id_token", try webToken(harness, login))]
        }
        try rejected(harness, status: 400, heading: "cannot be finished") { login in
            [("state", "made-up-state"), ("id_token", try webToken(harness, login))]
        }
        let browser = TestBrowser(harness)
        let login = try browser.openLogin()
        let fields = try browser.authorizeAtApple(login)
        harness.clock.advance(by: 601)
        let response = try browser.post("/apple_redirect", form: fields)
        #expect(response.status == 400)
        #expect(HTMLDocument(response.text).first("//h1")?.text.contains("expired") == true)
        #expect(try harness.userCount() == 0)
    }

    @Test("an oversized body is refused with 413")
    func oversizedBody() throws {
        let harness = try BridgeHarness()
        let browser = TestBrowser(harness)
        let login = try browser.openLogin()
        let response = try browser.post("/apple_redirect", form: [("state", login.state), ("id_token", String(repeating: "a", count: 70_000))])
        #expect(response.status == 413)
        #expect(HTMLDocument(response.text).first("//h1")?.text == "Too much was sent", "the listener's refusal takes the catalog's words")
        #expect(response.header("Content-Security-Policy")?.hasPrefix("default-src 'none'") == true)
        #expect(try harness.userCount() == 0)
    }

    @Test("a JSON body on the form callback is refused with 415")
    func wrongContentType() throws {
        let harness = try BridgeHarness()
        let response = try harness.request(method: "POST", path: "/apple_redirect",
                                                 headers: [("Content-Type", "application/json")], body: "{\"state\":\"x\"}")
        #expect(response.status == 415)
    }
}

final class StatusList: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [Int] = []
    func append(_ status: Int) { lock.lock(); stored.append(status); lock.unlock() }
    var values: [Int] { lock.lock(); defer { lock.unlock() }; return stored }
}
