@testable import Bridge
import BridgeSettings
import Foundation
import HTTPServer
import TestSupport
import Testing
import WebRoutes

/// What a person sees on the pages: their language, friendly refusals, the way onward after signing in.
@Suite("Pages for the person signing in")
struct PersonPagesTests {
    @Test("Accept-Language: ko gives Korean pages, error pages included; ?lang=en switches and is remembered")
    func korean() throws {
        let harness = try BridgeHarness()
        let login = try harness.request(path: "/login", headers: [("Accept-Language", "ko-KR,ko;q=0.9")])
        let document = HTMLDocument(login.text)
        #expect(document.first("//html")?.attributes["lang"] == "ko")
        #expect(login.header("Content-Language") == "ko")
        #expect(document.first("//span[@class='apple-button-label']")?.text == "Apple로 로그인")
        let missing = try harness.request(path: "/nowhere", headers: [("Accept-Language", "ko")])
        #expect(missing.status == 404)
        #expect(HTMLDocument(missing.text).first("//h1")?.text == "페이지를 찾을 수 없습니다")
        let switched = try harness.request(path: "/login?lang=en", headers: [("Accept-Language", "ko")])
        #expect(HTMLDocument(switched.text).first("//html")?.attributes["lang"] == "en")
        #expect(switched.setCookieHeader("asb_lang")?.hasPrefix("asb_lang=en;") == true)
        let api = try harness.api("/api/me", method: "GET")
        #expect(api.status == 401)
    }

    @Test("a GET on a POST-only address explains and offers the way onward, keeping 405 and Allow", arguments: [
        ("/apple_redirect", "/login", "This step of signing in cannot be reopened"),
        ("/logout", "/session", "Sign out from your account page"),
        ("/account/delete", "/session", "Delete your account from your account page"),
    ])
    func getOnPostOnly(path: String, onward: String, heading: String) throws {
        let harness = try BridgeHarness()
        let response = try harness.request(path: path)
        #expect(response.status == 405)
        #expect(response.header("Allow") == "POST")
        let document = HTMLDocument(response.text)
        #expect(document.first("//h1")?.text == heading)
        #expect(document.first("//a[contains(@class,'button-primary')]")?.attributes["href"] == onward)
        #expect(document.first("//*[contains(@class,'error-icon')]") == nil, "nothing went wrong: no alarm icon")
    }

    @Test("a missing /public/ file is a styled page for a browser, one line of text for a stylesheet request")
    func missingPublicFile() throws {
        let harness = try BridgeHarness()
        let page = try harness.request(path: "/public/nothing.html",
                                             headers: [("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")])
        #expect(page.status == 404)
        #expect(page.header("Content-Type")?.hasPrefix("text/html") == true)
        #expect(HTMLDocument(page.text).first("//link[@rel='stylesheet']") != nil)
        let asset = try harness.request(path: "/public/nothing.css", headers: [("Accept", "text/css,*/*;q=0.1")])
        #expect(asset.status == 404)
        #expect(asset.header("Content-Type")?.hasPrefix("text/plain") == true)
    }

    @Test("the rate-limit page counts down by itself, in the right plural, and its button waits")
    func rateLimitPage() throws {
        let harness = try BridgeHarness(signInRequestsPerMinute: 1)
        var limited: RawHTTPResponse?
        for _ in 0..<30 {
            let response = try harness.request(path: "/login")
            if response.status == 429 { limited = response; break }
        }
        let response = try #require(limited)
        let seconds = try #require(response.header("Retry-After").flatMap { Int($0) })
        let document = HTMLDocument(response.text)
        let lead = document.first("//p[@id='retry-message']")?.text
        #expect(lead == (seconds == 1 ? "Please wait 1 second and try again." : "Please wait \(seconds) seconds and try again."))
        let countdown = try #require(document.first("//p[@id='retry-countdown']"))
        #expect(countdown.attributes["data-seconds"] == String(seconds))
        #expect(countdown.attributes["data-other"] == "Please wait {count} seconds and try again.")
        #expect(document.first("//a[@id='retry-button']")?.attributes["aria-disabled"] == "true")
        #expect(document.first("//script[@src='/public/js/retry-countdown.js']") != nil)
    }

    @Test("a cancelled sign-in is a neutral 200 page without an error code")
    func cancelled() throws {
        let harness = try BridgeHarness()
        let browser = TestBrowser(harness)
        let fields = try browser.authorizeAtApple(try browser.openLogin(), cancel: true)
        let response = try browser.post("/apple_redirect", form: fields)
        #expect(response.status == 200)
        let document = HTMLDocument(response.text)
        #expect(document.first("//h1")?.text == "Sign-in cancelled")
        #expect(document.first("//p[@class='status-code']") == nil)
    }

    @Test("signed in, /login offers Continue as the person, to BRIDGE_AFTER_SIGN_IN_URL, and still a new sign-in")
    func continueAs() throws {
        let harness = try BridgeHarness(["BRIDGE_AFTER_SIGN_IN_URL": "/welcome", "BRIDGE_SITE_NAME": "Example Shop"])
        let browser = TestBrowser(harness)
        let signedIn = try browser.signIn()
        #expect(signedIn.header("Location") == "/welcome")
        let login = try browser.openLogin()
        let link = try #require(login.document.first("//a[@id='continue']"))
        #expect(link.attributes["href"] == "/welcome")
        #expect(link.text.hasPrefix("Continue as "))
        #expect(login.document.first("//h1")?.text == "Sign in to Example Shop")
        #expect(login.document.first("//title")?.text.contains("Example Shop") == true)
        let signedOut = try TestBrowser(harness).openLogin()
        #expect(signedOut.document.first("//a[@id='continue']") == nil)
    }
}

/// `return_to` on /login: only addresses on the BRIDGE_RETURN_URLS allow-list are ever a target.
@Suite("Return after sign-in")
struct ReturnToTests {
    static let settings = ["BRIDGE_RETURN_URLS": "https://app.example.com/done, https://app.example.com/area/*, /welcome"]

    func signIn(_ harness: BridgeHarness, returnTo: String) throws -> String? {
        let browser = TestBrowser(harness)
        let encoded = returnTo.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let login = try browser.openLogin("/login?return_to=" + encoded)
        let response = try browser.post("/apple_redirect", form: try browser.authorizeAtApple(login))
        #expect(response.status == 303)
        return response.header("Location")
    }

    @Test("an allowed address is where the sign-in lands", arguments: [
        "https://app.example.com/done", "https://app.example.com/area/orders?id=7", "/welcome",
    ])
    func allowed(target: String) throws {
        let harness = try BridgeHarness(Self.settings)
        #expect(try signIn(harness, returnTo: target) == target)
    }

    @Test("anything else lands on the default, never elsewhere", arguments: [
        "//evil.example", "/\\evil.example", "https://evil.example/", "https://app.example.com/done/../x",
        "https://app.example.com@evil.example/done", "https://app.example.com.evil.example/area/x",
        "%2F%2Fevil.example", "/%2F%2Fevil.example", "https://app.example.com/area/%2e%2e/x", "https://app.example.com/don",
        "/welcome/extra", "javascript:alert(1)", "https://user:pw@app.example.com/done", "https://app.example.com/area",
        " https://app.example.com/done", "https://app.example.com/done\r\nSet-Cookie: x=1",
    ])
    func refused(target: String) throws {
        let harness = try BridgeHarness(Self.settings)
        #expect(try signIn(harness, returnTo: target) == "/session")
    }

    @Test("a return cookie not signed by this server for this sign-in is ignored")
    func forgedCookie() throws {
        let harness = try BridgeHarness(Self.settings)
        let browser = TestBrowser(harness)
        let login = try browser.openLogin()
        let name = ReturnDestination.cookieName(forState: login.state)
        let forged = Data("https://app.example.com/done".utf8).base64EncodedString() + ".AAAA"
        browser.set(name, .init(value: forged, path: "/apple_redirect"))
        let response = try browser.post("/apple_redirect", form: try browser.authorizeAtApple(login))
        #expect(response.header("Location") == "/session")
        // Another sign-in's genuine cookie does not carry over either.
        let first = try browser.openLogin("/login?return_to=%2Fwelcome")
        let second = try browser.openLogin()
        let stolen = try #require(browser.cookies[ReturnDestination.cookieName(forState: first.state)])
        browser.set(ReturnDestination.cookieName(forState: second.state), stolen)
        let landed = try browser.post("/apple_redirect", form: try browser.authorizeAtApple(second))
        #expect(landed.header("Location") == "/session")
    }

    @Test("the language switch keeps an allowed return_to, and drops one that is not allowed")
    func languageSwitchKeepsReturnTo() throws {
        let harness = try BridgeHarness(Self.settings)
        let allowed = HTMLDocument(try TestBrowser(harness).get("/login?return_to=%2Fwelcome").text)
        #expect(allowed.first("//nav//a[@hreflang='ko']")?.attributes["href"] == "/login?return_to=%2Fwelcome&lang=ko")
        let refused = HTMLDocument(try TestBrowser(harness).get("/login?return_to=%2F%2Fevil").text)
        #expect(refused.first("//nav//a[@hreflang='ko']")?.attributes["href"] == "/login?lang=ko")
    }

    @Test("without BRIDGE_RETURN_URLS no return_to is followed")
    func noListNoReturn() throws {
        let harness = try BridgeHarness()
        #expect(try signIn(harness, returnTo: "/welcome") == "/session")
    }

    @Test("malformed settings stop start-up with one line naming the key", arguments: [
        ("BRIDGE_RETURN_URLS", "https://app.example.com*"), ("BRIDGE_RETURN_URLS", "//evil.example"),
        ("BRIDGE_AFTER_SIGN_IN_URL", "//evil.example"), ("BRIDGE_SITE_LOGO", "/nonexistent/logo.svg"),
        ("BRIDGE_SITE_LOGO", "logo.exe"),
    ])
    func badSettings(key: String, value: String) throws {
        var caught: ConfigurationError?
        do { _ = try BridgeHarness([key: value]) } catch let error as ConfigurationError { caught = error }
        #expect(caught?.key == key)
    }

    @Test("a logo file outside Public/ is read at start-up and shown in the header")
    func logo() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("logo-\(UUID().uuidString).svg").path
        try Data("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 1 1\"/>".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let harness = try BridgeHarness(["BRIDGE_SITE_LOGO": path])
        let login = try TestBrowser(harness).openLogin()
        #expect(login.document.first("//img[@class='brand-logo']")?.attributes["src"] == "/site-logo")
        let image = try harness.request(path: "/site-logo")
        #expect(image.status == 200)
        #expect(image.header("Content-Type") == "image/svg+xml")
    }
}
