import Foundation
import HTTPServer
import Testing
import TestSupport
import WebRoutes

/// Cookies a sibling domain or a plain-http page cannot plant: `__Host-` names when the public URL is https, a
/// refusal of two cookies of one name, and HSTS.
@Suite("Cookie hardening", .serialized)
struct CookieHardeningTests {
    /// The server as deployed: its public URL is https (the test still talks plain http to it on loopback).
    static func httpsHarness() throws -> BridgeHarness { try BridgeHarness(["BRIDGE_PUBLIC_URL": "https://login.example.com"]) }

    @Test("the binding cookie is __Host- prefixed, at Path=/, SameSite=None; Secure; HttpOnly, one per attempt")
    func bindingCookie() throws {
        let harness = try Self.httpsHarness()
        let first = try harness.request(path: "/login")
        let second = try harness.request(path: "/login")
        let binding = try #require(first.headerValues("Set-Cookie").first { $0.hasPrefix("__Host-asb_bind_") })
        let other = try #require(second.headerValues("Set-Cookie").first { $0.hasPrefix("__Host-asb_bind_") })
        #expect(binding.split(separator: "=").first != other.split(separator: "=").first)
        for attribute in ["Path=/;", "Secure", "HttpOnly", "SameSite=None", "Max-Age=600"] {
            #expect(binding.contains(attribute), "\(binding)")
        }
        #expect(!binding.contains("Domain="))
    }

    @Test("a web sign-in sets __Host-asb_session (Path=/, Secure, SameSite=Lax) and leaves the binding cookie to expire")
    func sessionCookie() throws {
        let harness = try Self.httpsHarness()
        let browser = TestBrowser(harness)
        let callback = try browser.signIn()
        #expect(callback.status == 303)
        let session = try #require(callback.setCookieHeader("__Host-asb_session"))
        #expect(session.contains("Path=/;") && session.contains("Secure") && session.contains("SameSite=Lax"))
        #expect(!callback.headerValues("Set-Cookie").contains { $0.hasPrefix("__Host-asb_bind_") })
        #expect(browser.cookies.keys.contains { $0.hasPrefix("__Host-asb_bind_") })
        #expect(try browser.get("/session").status == 200)
    }

    @Test("a session cookie without the prefix (as a sibling domain could plant it) is not read")
    func unprefixedSessionIgnored() throws {
        let harness = try Self.httpsHarness()
        let browser = TestBrowser(harness)
        _ = try browser.signIn()
        let id = try #require(browser.cookies["__Host-asb_session"]?.value)
        let response = try harness.request(path: "/session", headers: [("Cookie", "asb_session=\(id)")])
        #expect(response.status == 303)
        #expect(response.header("Location") == "/login")
    }

    @Test("two session cookies of one name are refused with a 400 page")
    func duplicateSessionCookie() throws {
        let harness = try Self.httpsHarness()
        let browser = TestBrowser(harness)
        _ = try browser.signIn()
        let id = try #require(browser.cookies["__Host-asb_session"]?.value)
        let response = try harness.request(path: "/session",
                                                 headers: [("Cookie", "__Host-asb_session=planted; __Host-asb_session=\(id)")])
        #expect(response.status == 400)
        let page = HTMLDocument(response.text)
        #expect(page.first("//h1")?.text.contains("cookie") == true, "\(page.text)")
        #expect(response.header("Content-Security-Policy") != nil)
    }

    @Test("the duplicate check compares cookie names as bytes: a combining mark after the prefix neither hides a name nor joins two")
    func duplicateCheckComparesBytes() {
        // "asb_" followed by U+0301 is one Character ("_" with an accent), so `hasPrefix("asb_")` said no.
        let marked = "asb_\u{301}session"
        #expect(CookieNames.duplicated(among: [(marked, "1"), (marked, "2")]) == marked)
        // Precomposed and decomposed spellings are equal as Strings but are two names to a browser.
        let precomposed = "asb_bind_\u{E9}", decomposed = "asb_bind_e\u{301}"
        #expect(CookieNames.duplicated(among: [(precomposed, "1"), (decomposed, "2")]) == nil)
        #expect(CookieNames.duplicated(among: [("__Host-asb_session", "1"), ("__Host-asb_session", "2")]) == "__Host-asb_session")
    }

    @Test("a callback with two binding cookies of one name is refused with 400 and signs nobody in")
    func duplicateBindingCookie() throws {
        let harness = try Self.httpsHarness()
        let browser = TestBrowser(harness)
        let login = try browser.openLogin()
        let fields = try browser.authorizeAtApple(login)
        let (name, cookie) = try #require(browser.cookies.first { $0.key.hasPrefix("__Host-asb_bind_") })
        let response = try harness.request(
            method: "POST", path: "/apple_redirect",
            headers: [("Content-Type", "application/x-www-form-urlencoded"),
                      ("Cookie", "\(name)=planted-by-attacker; \(name)=\(cookie.value)")],
            body: FormFields(fields).urlEncoded)
        #expect(response.status == 400)
        #expect(response.setCookieHeader("__Host-asb_session") == nil)
        #expect(try harness.userCount() == 0)
        // Nothing was spent: the browser's own request still finishes.
        #expect(try browser.post("/apple_redirect", form: fields).status == 303)
    }

    @Test("over http on loopback (development) the names go without the prefix, with the same attributes")
    func developmentNames() throws {
        let harness = try BridgeHarness()
        let browser = TestBrowser(harness)
        let login = try harness.request(path: "/login")
        let binding = try #require(login.headerValues("Set-Cookie").first { $0.hasPrefix("asb_bind_") })
        #expect(binding.contains("Path=/;") && binding.contains("Secure") && binding.contains("SameSite=None"))
        #expect(try browser.signIn().setCookieHeader("asb_session")?.contains("Secure") == true)
        #expect(try browser.get("/session").status == 200)
        let id = try #require(browser.cookies["asb_session"]?.value)
        let twice = try harness.request(path: "/session",
                                              headers: [("Cookie", "asb_session=planted; asb_session=\(id)")])
        #expect(twice.status == 400)
    }

    @Test("Strict-Transport-Security is sent when BRIDGE_PUBLIC_URL is https, and not over plain http")
    func strictTransportSecurity() throws {
        let https = try BridgeHarness(["BRIDGE_PUBLIC_URL": "https://login.example.com"])
        for path in ["/login", "/healthz", "/api/me", "/nowhere"] {
            let response = try https.request(path: path)
            #expect(response.header("Strict-Transport-Security")?.hasPrefix("max-age=") == true, "\(path)")
        }
        let http = try BridgeHarness()
        #expect(try http.request(path: "/login").header("Strict-Transport-Security") == nil)
    }
}
