import AppleIDSimulator
import Bridge
import Foundation
import HTTPServer
import JOSE
import Testing
import TestSupport

/// A token that carries a nonce is only accepted together with the value it was made from; with
/// APPLE_REQUIRE_NONCE=1 a token without one is refused on every path.
@Suite("Nonce binding", .serialized)
struct NonceBindingTests {
    static let bundleID = BridgeHarness.bundleID

    @Test("a token carrying a server nonce, sent without it, is refused and spends nothing; the app that sends it still signs in")
    func serverNonceWithheld() throws {
        let harness = try BridgeHarness()
        let nonce = try #require(try harness.api("/api/auth/nonce").body["nonce"]?.stringValue)
        let token = try harness.token(audience: Self.bundleID, nonce: SHA256.hexDigest(Array(nonce.utf8)))

        let withheld = try harness.api("/api/auth/apple", json: harness.json(["idToken": .string(token)]))
        #expect(withheld.status == 401)
        #expect(withheld.body["error"]?.stringValue == "nonce_required")
        #expect(withheld.body["refreshToken"] == nil)
        #expect(try harness.userCount() == 0)

        let app = try harness.api("/api/auth/apple", json: harness.json(["idToken": .string(token), "nonce": .string(nonce)]))
        #expect(app.status == 200)
        let me = try harness.api("/api/me", method: "GET", bearer: app.body["accessToken"]?.stringValue)
        #expect(me.body["nonceVerified"] == .bool(true))
    }

    @Test("a bundle-ID token carrying a web login attempt's nonce cannot be redeemed on the API without it")
    func loginAttemptNonceWithheld() throws {
        let harness = try BridgeHarness()
        let login = try TestBrowser(harness).openLogin()
        let token = try harness.token(audience: Self.bundleID, nonce: login.nonce)
        let result = try harness.api("/api/auth/apple", json: "{\"identityToken\":\"\(token)\",\"nonce\":\"  \"}")
        #expect(result.status == 401)
        #expect(result.body["error"]?.stringValue == "nonce_required")
        #expect(try harness.userCount() == 0)
    }

    @Test("an app's own nonce is accepted once sent with the token (raw), recorded as not verified by this server")
    func appOwnNonce() throws {
        let harness = try BridgeHarness()
        let token = try harness.token(audience: Self.bundleID, nonce: SHA256.hexDigest(Array("app-local-nonce".utf8)))
        let result = try harness.api("/api/auth/apple", json: harness.json(["token": .string(token), "nonce": "app-local-nonce"]))
        #expect(result.status == 200)
        let me = try harness.api("/api/me", method: "GET", bearer: result.body["accessToken"]?.stringValue)
        #expect(me.body["nonceVerified"] == .bool(false))
    }

    @Test("without APPLE_REQUIRE_NONCE a bundle-ID token with no nonce claim is still accepted on the API")
    func nonceLessTokenStillAccepted() throws {
        let harness = try BridgeHarness()
        let token = try harness.token(audience: Self.bundleID, nonce: nil)
        let result = try harness.api("/api/auth/apple", json: harness.json(["idToken": .string(token)]))
        #expect(result.status == 200)
    }

    @Suite("APPLE_REQUIRE_NONCE=1")
    struct RequireNonce {
        @Test("the API refuses a token without a nonce claim, and takes one with a server nonce")
        func api() throws {
            let harness = try BridgeHarness(["APPLE_REQUIRE_NONCE": "1"])
            let bare = try harness.token(audience: NonceBindingTests.bundleID, nonce: nil)
            let refused = try harness.api("/api/auth/apple", json: harness.json(["idToken": .string(bare)]))
            #expect(refused.status == 401)
            #expect(refused.body["error"]?.stringValue == "missing_nonce")
            #expect(try harness.userCount() == 0)

            let nonce = try #require(try harness.api("/api/auth/nonce").body["nonce"]?.stringValue)
            let bound = try harness.token(audience: NonceBindingTests.bundleID, nonce: SHA256.hexDigest(Array(nonce.utf8)))
            let accepted = try harness.api("/api/auth/apple", json: harness.json(["idToken": .string(bound), "nonce": .string(nonce)]))
            #expect(accepted.status == 200)
        }

        @Test("the webview callback refuses a bundle-ID token without a nonce claim")
        func webviewCallback() throws {
            let harness = try BridgeHarness(["APPLE_REQUIRE_NONCE": "1"])
            let browser = TestBrowser(harness)
            let login = try browser.openLogin()
            let token = try harness.token(audience: NonceBindingTests.bundleID, nonce: nil)
            let response = try browser.post("/apple_redirect", form: [("state", login.state), ("id_token", token)])
            #expect(response.status == 401)
            #expect(HTMLDocument(response.text).first("//h1")?.text.contains("could not verify") == true)
            #expect(try harness.userCount() == 0)

            let again = try browser.openLogin()
            let bound = try harness.token(audience: NonceBindingTests.bundleID, nonce: SHA256.hexDigest(Array(again.nonce.utf8)))
            #expect(try browser.post("/apple_redirect", form: [("state", again.state), ("id_token", bound)]).status == 303)
        }

        @Test("a value other than 0 or 1 stops start-up naming the key")
        func malformed() throws {
            let problem = configurationProblem(["APPLE_REQUIRE_NONCE": "sometimes"])
            #expect(problem?.key == "APPLE_REQUIRE_NONCE")
        }
    }
}
