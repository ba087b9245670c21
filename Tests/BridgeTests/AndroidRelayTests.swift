import AppleID
import AppleIDSimulator
import Bridge
import BridgeSettings
import Foundation
import HTTPServer
import JOSE
import JSON
import Storage
import Testing
import TestSupport
import WebRoutes

/// Flutter's `sign_in_with_apple` on Android: Apple form_posts to `POST /apple/android/<package>`, the bridge verifies
/// the identity token and sends the Custom Tab to the plugin's `intent://` URL; the app then signs in through the JSON
/// API, and its code is exchanged as the Services ID with the relay's URL.
@Suite("The Android relay for Flutter's sign_in_with_apple", .serialized)
struct AndroidRelayTests {
    static let package = "com.example.flutter_app"
    static let relayPath = "/apple/android/" + package

    /// A server that relays to `package`, exchanges every code and requires the exchange to succeed.
    func relayHarness(_ extra: [String: String] = [:]) throws -> BridgeHarness {
        try keyedHarness(["APPLE_ANDROID_PACKAGES": "com.example.other, " + Self.package, "APPLE_REQUIRE_CODE_EXCHANGE": "1"]
            .merging(extra) { _, new in new })
    }

    func relayURL(_ harness: BridgeHarness, _ path: String = relayPath) -> String { harness.app.configuration.publicURL + path }

    /// What the plugin's Custom Tab does at Apple: Apple's authorize page with the relay's URL as `redirect_uri` and
    /// the nonce the app hashed into the request; returns the fields Apple form_posts to the relay.
    func authorizeAsPlugin(_ harness: BridgeHarness, hashedNonce: String, state: String = "plugin-state",
                           cancel: Bool = false, redirectURI: String? = nil) throws -> [(String, String)] {
        let relay = redirectURI ?? relayURL(harness)
        let query = FormFields([
            ("client_id", BridgeHarness.servicesID), ("redirect_uri", relay), ("response_type", "code id_token"),
            ("scope", "name email"), ("response_mode", "form_post"), ("state", state), ("nonce", hashedNonce),
        ]).urlEncoded
        let login = TestBrowser.LoginPage(state: state, nonce: hashedNonce,
                                          authorizeURL: "http://127.0.0.1:\(harness.simulatorPort)/auth/authorize?" + query,
                                          document: HTMLDocument(""))
        return try TestBrowser(harness).authorizeAtApple(login, cancel: cancel, redirectURI: relay)
    }

    func post(_ harness: BridgeHarness, to path: String = relayPath, _ fields: [(String, String)]) throws -> RawHTTPResponse {
        try harness.request(method: "POST", path: path,
                                  headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                  body: FormFields(fields).urlEncoded)
    }

    /// The intent the relay answered with, checked as the plugin reads it: the posted fields as its query.
    func handedOver(_ response: RawHTTPResponse, package: String = package) throws -> [(String, String)] {
        #expect(response.status == 303)
        #expect(response.header("Cache-Control") == "no-store")
        let location = try #require(response.header("Location"))
        let suffix = "#Intent;package=\(package);scheme=signinwithapple;end"
        #expect(location.hasPrefix("intent://callback?") && location.hasSuffix(suffix), "\(location.prefix(40))")
        // The page holds the same link, for a Custom Tab that does not follow the redirect; its policy does not
        // govern a followed link, and allows no script.
        let page = HTMLDocument(response.text)
        #expect(page.first("//a[@id='return-to-app']")?.attributes["href"] == location)
        let policy = try #require(response.header("Content-Security-Policy"))
        #expect(policy.contains("script-src 'self'") && !policy.contains("navigate-to"))
        let url = try #require(URLComponents(string: location))
        #expect(url.scheme == "intent" && url.host == "callback")
        #expect(url.fragment == String(suffix.dropFirst()))
        return FormFields(urlEncoded: url.percentEncodedQuery ?? "").pairs.map { ($0.name, $0.value) }
    }

    func relayedRedirect(_ harness: BridgeHarness, code: String) throws -> String? {
        let digest = SHA256.hexDigest(Array(code.utf8))
        return try harness.app.store.read { try $0.relayedCodeRedirectURI(codeHash: digest, now: Date()) }
    }

    @Test("a sign-in as the plugin makes it: Apple posts to the relay, the app gets the fields from the intent, signs in with the raw server nonce, and its code is exchanged as the Services ID with the relay's URL")
    func pluginSignIn() throws {
        let harness = try relayHarness()
        let nonce = try #require(try harness.api("/api/auth/nonce").body["nonce"]?.stringValue)
        let posted = try authorizeAsPlugin(harness, hashedNonce: SHA256.hexDigest(Array(nonce.utf8)))
        #expect(Set(posted.map(\.0)) == ["state", "code", "id_token", "user"])

        let intent = try handedOver(try post(harness, posted))
        #expect(intent.map(\.0) == posted.map(\.0) && intent.map(\.1) == posted.map(\.1), "the fields are relayed unchanged")
        let code = try #require(intent.value("code"))
        #expect(try relayedRedirect(harness, code: code) == relayURL(harness))

        // The app, as the plugin hands it the credential: the code, the identity token, the raw nonce, the name.
        let signIn = try harness.api("/api/auth/apple", json: harness.json([
            "identityToken": .string(try #require(intent.value("id_token"))), "authorizationCode": .string(code),
            "nonce": .string(nonce), "user": .string(try #require(intent.value("user"))),
        ]))
        #expect(signIn.status == 200, "\(signIn.body)")
        let access = try #require(signIn.body["accessToken"]?.stringValue)
        let me = try harness.api("/api/me", method: "GET", bearer: access)
        #expect(me.body["flow"]?.stringValue == "api" && me.body["nonceVerified"]?.boolValue == true)
        #expect(me.body["sub"]?.stringValue == SimulatedUser.ada.sub)
        #expect(me.body["displayName"]?.stringValue?.isEmpty == false)
        // Apple's grant, got by the exchange, is what deleting the account revokes.
        #expect(try harness.api("/api/me", method: "DELETE", bearer: access).body["appleRevocation"]?.stringValue == "revoked")
    }

    @Test("a Services-ID code the relay did not hand over is exchanged with /apple_redirect; a native one with no redirect URI")
    func otherCodesExchangeAsBefore() throws {
        let harness = try relayHarness()
        // Apple JS in an app's webview, with the callback as its redirect URI and a server nonce: its code, posted to
        // the JSON API.
        let nonce = try #require(try harness.api("/api/auth/nonce").body["nonce"]?.stringValue)
        let posted = try authorizeAsPlugin(harness, hashedNonce: nonce, redirectURI: harness.app.configuration.redirectURI)
        let web = try harness.api("/api/auth/apple", json: harness.json([
            "idToken": .string(try #require(posted.value("id_token"))), "code": .string(try #require(posted.value("code"))),
            "nonce": .string(nonce),
        ]))
        #expect(web.status == 200, "\(web.body)")
        #expect(try harness.nativeSignIn(user: .alan).status == 200)
    }

    @Test("a web code relayed to an app cannot be exchanged with another redirect URI: the simulator refuses it as Apple does")
    func simulatorBindsTheRedirectURI() throws {
        let harness = try relayHarness()
        let nonce = try #require(try harness.api("/api/auth/nonce").body["nonce"]?.stringValue)
        let posted = try authorizeAsPlugin(harness, hashedNonce: SHA256.hexDigest(Array(nonce.utf8)))
        // Not through the relay: the bridge has no record, so it exchanges with /apple_redirect, and Apple refuses.
        let signIn = try harness.api("/api/auth/apple", json: harness.json([
            "identityToken": .string(try #require(posted.value("id_token"))),
            "authorizationCode": .string(try #require(posted.value("code"))), "nonce": .string(nonce),
        ]))
        #expect(signIn.status == 401 && signIn.body["error"]?.stringValue == "code_exchange_failed", "\(signIn.body)")
    }

    @Test("Apple's cancel is handed to the app the same way, for the plugin to report it")
    func cancel() throws {
        let harness = try relayHarness()
        let posted = try authorizeAsPlugin(harness, hashedNonce: "n", state: "s1", cancel: true)
        let intent = try handedOver(try post(harness, posted))
        #expect(intent.value("error") == "user_cancelled_authorize" && intent.value("state") == "s1")
        #expect(intent.value("code") == nil)
    }

    @Test("an unknown package gets the error page and no intent")
    func unknownPackage() throws {
        let harness = try relayHarness()
        let posted = try authorizeAsPlugin(harness, hashedNonce: "n")
        for path in ["/apple/android/com.example.stranger", "/apple/android/", "/apple/android/\(Self.package)/x",
                     "/apple/android/\(Self.package.uppercased())", "/apple/android/com.example.flutter_app%2F"] {
            let response = try post(harness, to: path, posted)
            #expect(response.status == 404 && response.header("Location") == nil, "\(path)")
            #expect(response.header("Content-Type")?.hasPrefix("text/html") == true, "\(path)")
            #expect(HTMLDocument(response.text).first("//*[@data-reason]")?.attributes["data-reason"] == "unknown_android_app")
            #expect(!response.text.contains("intent:"), "\(path)")
        }
        #expect(try relayedRedirect(harness, code: try #require(posted.value("code"))) == nil)
    }

    @Test("a token that does not verify is refused with a page, and nothing is relayed or recorded")
    func badTokens() throws {
        let harness = try relayHarness()
        let code = harness.simulator.issueAuthorizationCode(clientID: BridgeHarness.servicesID, user: .ada)
        let cases: [(String, String, String)] = [
            ("another code's c_hash", try harness.token(nonce: "n", code: "another-code"), "code_hash_mismatch"),
            ("a bundle ID's token", try harness.token(audience: BridgeHarness.bundleID, nonce: "n", code: code), "wrong_audience"),
            ("no nonce", try harness.token(nonce: nil, code: code), "missing_nonce"),
            ("expired", try harness.token(nonce: "n", code: code) { $0.issuedAt = Date().addingTimeInterval(-7200) }, "token_expired"),
            ("another issuer", try harness.token(nonce: "n", code: code) { $0.issuer = "https://evil.example" }, "wrong_issuer"),
            ("a forged signature", String(try harness.token(nonce: "n", code: code).dropLast(4)) + "AAAA", "bad_signature"),
        ]
        for (name, token, reason) in cases {
            let response = try post(harness, [("state", "s"), ("code", code), ("id_token", token)])
            #expect((400..<500).contains(response.status) && response.header("Location") == nil, "\(name): \(response.status)")
            #expect(!response.text.contains("intent:"), "\(name)")
            let shown = HTMLDocument(response.text).first("//*[@data-reason]")?.attributes["data-reason"]
            #expect(shown == reason, "\(name): \(shown ?? "none")")
        }
        #expect(try relayedRedirect(harness, code: code) == nil)
        // Nobody signed in at the relay: its refusals are not the callback's sign-in rejections.
        let metrics = try harness.request(path: "/metrics").text
        #expect(!metrics.contains("bridge_callback_rejections_total{reason=\"code_hash_mismatch\"}"))
    }

    @Test("missing fields, a body that is not a form and another method are refused with pages")
    func missingFields() throws {
        let harness = try relayHarness()
        let code = harness.simulator.issueAuthorizationCode(clientID: BridgeHarness.servicesID, user: .ada)
        let token = try harness.token(nonce: "n", code: code)
        for (fields, reason) in [([("state", "s"), ("code", code)], "missing_id_token"),
                                 ([("state", "s"), ("id_token", token)], "missing_code"),
                                 ([], "missing_id_token")] {
            let response = try post(harness, fields)
            #expect(response.status == 400 && response.header("Location") == nil, "\(reason)")
            #expect(HTMLDocument(response.text).first("//*[@data-reason]")?.attributes["data-reason"] == reason)
        }
        let repeated = try post(harness, [("state", "s"), ("code", code), ("id_token", token), ("code", "another-code")])
        #expect(repeated.status == 400 && repeated.header("Location") == nil)
        let json = try harness.request(method: "POST", path: Self.relayPath,
                                             headers: [("Content-Type", "application/json")], body: "{}")
        #expect(json.status == 415 && json.header("Content-Type")?.hasPrefix("text/html") == true)
        let get = try harness.request(path: Self.relayPath)
        #expect(get.status == 405 && get.header("Content-Type")?.hasPrefix("text/html") == true)
        #expect(try relayedRedirect(harness, code: code) == nil)
    }

    @Test("the relay's paths answer refusals as pages, the rest of /apple/ as JSON; the relay is off without packages")
    func refusalShapes() throws {
        let harness = try relayHarness()
        let refuse = harness.app.routes.refusalResponse
        for status in [400, 413, 429, 503] {
            #expect(refuse(Self.relayPath, status, "Refused.").isHTML)
            #expect(refuse("/apple/android/anything", status, "Refused.").isHTML)
            #expect(!refuse("/apple/nosuch", status, "Refused.").isHTML)
            // A combining mark after the prefix: `String.hasPrefix` saw no `/apple/android/` (one character "/́"), and
            // the JSON group of `/apple/` answered.
            #expect(refuse("/apple/android/\u{301}x", status, "Refused.").isHTML)
        }
        let off = try BridgeHarness()
        let response = try post(off, [("error", "user_cancelled_authorize")])
        #expect(response.status == 404 && response.header("Location") == nil)
    }

    @Test("APPLE_ANDROID_PACKAGES takes Android application ids, and needs the Services ID")
    func configuration() throws {
        #expect(configurationProblem(["APPLE_ANDROID_PACKAGES": "com.example.app, org.example_2.App"]) == nil)
        let configured = try #require(try? BridgeConfiguration(values: [
            "BRIDGE_PUBLIC_URL": "https://login.example.com", "APPLE_SERVICES_ID": BridgeHarness.servicesID,
            "APPLE_ANDROID_PACKAGES": " com.example.app ,org.example_2.App,",
        ], mode: .development))
        #expect(configured.androidPackages == ["com.example.app", "org.example_2.App"])
        #expect(configured.androidRelayURL(package: "com.example.app") == "https://login.example.com/apple/android/com.example.app")
        #expect(configured.androidRelayDestinationSources["https://login.example.com/apple/android/org.example_2.App"] == ["intent:"])
        for bad in ["com", "com.example.1app", "com..app", "com.example-app", "com.example.app/x", "com.exämple.app", ".com.app"] {
            #expect(configurationProblem(["APPLE_ANDROID_PACKAGES": bad])?.key == "APPLE_ANDROID_PACKAGES", "\(bad)")
        }
        let withoutServicesID = configurationProblem(["APPLE_ANDROID_PACKAGES": "com.example.app", "APPLE_SERVICES_ID": ""])
        #expect(withoutServicesID?.key == "APPLE_ANDROID_PACKAGES")
        #expect(withoutServicesID?.description.contains("APPLE_SERVICES_ID") == true)
    }
}

extension TwoInstanceTests {
    @Test("a code relayed by one instance is exchanged with the relay's URL by the other, which finishes the app's sign-in")
    func relayedOnOneSignedInOnTheOther() throws {
        let relay = AndroidRelayTests()
        try withPair(settings: ["APPLE_ANDROID_PACKAGES": AndroidRelayTests.package, "APPLE_REQUIRE_CODE_EXCHANGE": "1"]) { pair in
            let nonce = try #require(try pair.b.api("/api/auth/nonce").body["nonce"]?.stringValue)
            let posted = try relay.authorizeAsPlugin(pair.a, hashedNonce: SHA256.hexDigest(Array(nonce.utf8)))
            let intent = try relay.handedOver(try relay.post(pair.a, posted))
            let signIn = try pair.b.api("/api/auth/apple", json: pair.b.json([
                "identityToken": .string(try #require(intent.value("id_token"))),
                "authorizationCode": .string(try #require(intent.value("code"))), "nonce": .string(nonce),
            ]))
            #expect(signIn.status == 200, "\(signIn.body)")
        }
    }
}
