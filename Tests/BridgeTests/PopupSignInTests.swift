@testable import Bridge
import AppleIDSimulator
import BridgeSettings
import Foundation
import HTTPServer
import JSON
import Testing
import TestSupport
import WebPresentation
import WebRoutes

/// APPLE_JS_POPUP: Apple's JS SDK signs in in a popup and the login page posts the answer to `/apple_redirect` itself,
/// where it is checked exactly as Apple's form_post is.
@Suite("Apple's JS SDK in popup mode", .serialized)
struct PopupSignInTests {
    static let popupSettings = ["APPLE_JS_SDK": "1", "APPLE_JS_POPUP": "1"]

    @Test("APPLE_JS_POPUP is a flag, off by default, and needs APPLE_JS_SDK")
    func configuration() throws {
        #expect(configurationProblem([:]) == nil)
        #expect(configurationProblem(Self.popupSettings) == nil)
        #expect(configurationProblem(["APPLE_JS_SDK": "1", "APPLE_JS_POPUP": "maybe"])?.key == "APPLE_JS_POPUP")
        let withoutSDK = try #require(configurationProblem(["APPLE_JS_POPUP": "1"]))
        #expect(withoutSDK.key == "APPLE_JS_POPUP")
        #expect(withoutSDK.problem.contains("APPLE_JS_SDK"))
        #expect(BridgeConfiguration.keys.contains("APPLE_JS_POPUP"))
        let base = ["BRIDGE_SECRET_KEY": Data(repeating: 7, count: 32).base64EncodedString(), "APPLE_SERVICES_ID": "com.example.web"]
        #expect(try BridgeConfiguration(values: base, mode: .production).useJSPopup == false)
        #expect(try BridgeConfiguration(values: base.merging(Self.popupSettings) { $1 }, mode: .production).useJSPopup)
    }

    @Test("Apple's SDK comes from Apple's CDN, except in development against a stand-in for Apple")
    func sdkBaseURL() throws {
        let base = ["BRIDGE_SECRET_KEY": Data(repeating: 7, count: 32).base64EncodedString(), "APPLE_SERVICES_ID": "com.example.web"]
        let local = base.merging(["APPLE_ID_URL": "http://127.0.0.1:8081"]) { $1 }
        #expect(try BridgeConfiguration(values: base, mode: .production).appleJSSDKBaseURL == "https://appleid.cdn-apple.com")
        #expect(try BridgeConfiguration(values: local, mode: .production).appleJSSDKBaseURL == "https://appleid.cdn-apple.com")
        #expect(try BridgeConfiguration(values: base, mode: .development).appleJSSDKBaseURL == "https://appleid.cdn-apple.com")
        #expect(try BridgeConfiguration(values: local, mode: .development).appleJSSDKBaseURL == "http://127.0.0.1:8081")
    }

    @Test("the login page's policy: the SDK's origin as a script source; in popup mode form-action names where a sign-in lands")
    func loginPagePolicy() throws {
        let values = ["BRIDGE_PUBLIC_URL": "https://login.example.com",
                      "BRIDGE_SECRET_KEY": Data(repeating: 7, count: 32).base64EncodedString(),
                      "APPLE_SERVICES_ID": "com.example.web", "BRIDGE_AFTER_SIGN_IN_URL": "https://app.example.com/home",
                      "BRIDGE_RETURN_URLS": "https://shop.example.com/account/*, /welcome"]
        func policy(_ settings: [String: String]) throws -> String {
            ContentSecurityPolicy.loginPage(try BridgeConfiguration(values: values.merging(settings) { $1 }, mode: .production))
        }
        #expect(try policy([:]) == ContentSecurityPolicy.header())
        #expect(try policy(["APPLE_JS_SDK": "1"]) == "default-src 'none'; script-src 'self' https://appleid.cdn-apple.com; "
            + "style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
        #expect(try policy(Self.popupSettings) == "default-src 'none'; script-src 'self' https://appleid.cdn-apple.com; "
            + "style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            + "form-action 'self' https://app.example.com https://shop.example.com; frame-ancestors 'none'; base-uri 'none'")
    }

    @Test("the login page asks for the popup and holds the cancelled notice; its policy allows the simulator's SDK")
    func loginPage() throws {
        let harness = try BridgeHarness(Self.popupSettings.merging(["BRIDGE_RETURN_URLS": "https://shop.example.com/*"]) { $1 })
        let simulator = "http://127.0.0.1:\(harness.simulatorPort)"
        let response = try harness.request(path: "/login")
        let page = HTMLDocument(response.text)
        let link = try #require(page.first("//a[@id='apple-signin']"))
        #expect(link.attributes["data-use-popup"] == "1")
        #expect(link.attributes["data-sdk-src"] == simulator + "/appleauth/static/jsapi/appleid/1/en_US/appleid.auth.js")
        #expect(page.first("//p[@id='apple-signin-cancelled']")?.attributes["hidden"] != nil)
        let policy = try #require(response.header("Content-Security-Policy"))
        #expect(policy.contains("script-src 'self' \(simulator);"))
        #expect(policy.contains("form-action 'self' https://shop.example.com;"))
        #expect(policy.contains("connect-src 'self';"))
        // The SDK itself is reachable where the page says.
        let sdk = try RawHTTPClient.request(port: harness.simulatorPort,
                                            path: "/appleauth/static/jsapi/appleid/1/en_US/appleid.auth.js")
        #expect(sdk.status == 200)
    }

    @Test("the popup's answer, posted by the page, signs in and lands on the session page with the name from `user`")
    func signIn() throws {
        let harness = try BridgeHarness(Self.popupSettings)
        let browser = TestBrowser(harness)
        let login = try browser.openLogin()
        let answer = try popupAnswer(browser, login)
        #expect(answer.map(\.0) == ["state", "code", "id_token", "user"])
        let callback = try browser.post("/apple_redirect", form: answer)
        #expect(callback.status == 303)
        #expect(callback.header("Location") == "/session")
        let text = HTMLDocument(try browser.get("/session").text).text
        #expect(text.contains(SimulatedUser.ada.sub) && text.contains("Ada Lovelace"))
        #expect(try harness.userCount() == 1)
    }

    @Test("with an allowed return_to the popup's answer lands there")
    func returnTo() throws {
        let harness = try BridgeHarness(Self.popupSettings.merging(["BRIDGE_RETURN_URLS": "/session?from=popup"]) { $1 })
        let browser = TestBrowser(harness)
        let login = try browser.openLogin("/login?return_to=%2Fsession%3Ffrom%3Dpopup")
        let callback = try browser.post("/apple_redirect", form: try popupAnswer(browser, login))
        #expect(callback.status == 303)
        #expect(callback.header("Location") == "/session?from=popup")
    }

    @Test("a changed state, another login's state (nonce), a swapped code (c_hash) or another browser are refused, with no user")
    func refusals() throws {
        let harness = try BridgeHarness(Self.popupSettings)
        let browser = TestBrowser(harness)
        let first = try browser.openLogin()
        let answer = try popupAnswer(browser, first)
        let second = try browser.openLogin()
        let other = try popupAnswer(browser, second, user: .grace)

        let tampered = answer.replacing("state", with: String(first.state.dropLast(2)) + "xx")
        #expect(try browser.post("/apple_redirect", form: tampered).status == 400)
        let wrongNonce = answer.replacing("state", with: second.state)
        #expect(try browser.post("/apple_redirect", form: wrongNonce).status == 401)
        let swappedCode = answer.replacing("code", with: other.value("code"))
        #expect(try browser.post("/apple_redirect", form: swappedCode).status == 401)
        let stranger = TestBrowser(harness)
        _ = try stranger.openLogin()
        #expect(try stranger.post("/apple_redirect", form: answer).status == 403)
        #expect(try harness.userCount() == 0)
        // None of those spent the attempt: the genuine answer still signs in, once.
        #expect(try browser.post("/apple_redirect", form: answer).status == 303)
        #expect(try stranger.post("/apple_redirect", form: answer).status == 400)
        // Posted again by the browser it signed in, it lands where it did, opening no second session.
        let again = try browser.post("/apple_redirect", form: answer)
        #expect(again.status == 303 && again.header("Location") == "/session" && again.setCookieHeader("asb_session") == nil)
        #expect(try harness.userCount() == 1)
    }

    /// What the login page posts after the popup: the simulator's web_message answer for this login, as the bridge
    /// script turns it into form fields (`user` back to JSON text).
    func popupAnswer(_ browser: TestBrowser, _ login: TestBrowser.LoginPage,
                     user: SimulatedUser = .ada) throws -> [(String, String)] {
        let configuration = browser.harness.app.configuration
        let query = FormFields([
            ("client_id", BridgeHarness.servicesID), ("redirect_uri", configuration.redirectURI),
            ("response_type", "code id_token"), ("scope", LoginPage.scope), ("response_mode", "web_message"),
            ("state", login.state), ("nonce", login.nonce),
        ])
        let consent = try RawHTTPClient.request(port: browser.harness.simulatorPort, path: "/auth/authorize?" + query.urlEncoded)
        #expect(consent.status == 200)
        let posted = try RawHTTPClient.request(
            port: browser.harness.simulatorPort, method: "POST", path: "/auth/authorize",
            headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: FormFields(query.pairs.map { ($0.name, $0.value) } + [("user", user.sub), ("action", "continue")]).urlEncoded)
        let element = try #require(HTMLDocument(posted.text).first("//div[@id='web-message']"), "\(posted.text)")
        #expect(element.attributes["data-target-origin"] == "http://127.0.0.1:\(browser.harness.port)")
        let message = try JSONValue.parse(try #require(element.attributes["data-message"]))
        let data = try #require(message["data"])
        let authorization = try #require(data["authorization"])
        var fields = try ["state", "code", "id_token"].map { name in
            (name, try #require(authorization[name]?.stringValue))
        }
        if let user = data["user"] { fields.append(("user", user.serialized())) }
        return fields
    }
}
