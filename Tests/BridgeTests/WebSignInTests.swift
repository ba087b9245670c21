import AppleIDSimulator
import Foundation
import HTTPServer
import JOSE
import Testing
import TestSupport

@Suite("Web sign-in end to end", .serialized)
struct WebSignInTests {
    @Test("the login page links to Apple's authorize URL with a fresh state and nonce, and binds the browser")
    func loginPage() throws {
        let harness = try BridgeHarness()
        let browser = TestBrowser(harness)
        let first = try browser.openLogin()
        let second = try TestBrowser(harness).openLogin()

        let url = try #require(URLComponents(string: first.authorizeURL))
        #expect(url.path == "/auth/authorize")
        let query = Dictionary(uniqueKeysWithValues: (url.queryItems ?? []).map { ($0.name, $0.value ?? "") })
        #expect(query["client_id"] == BridgeHarness.servicesID)
        #expect(query["redirect_uri"] == "http://127.0.0.1:\(harness.port)/apple_redirect")
        #expect(query["response_type"] == "code id_token")
        #expect(query["scope"] == "name email")
        #expect(query["response_mode"] == "form_post")
        #expect(query["state"] == first.state)
        #expect(query["nonce"] == first.nonce)
        #expect(first.authorizeURL.contains("response_type=code%20id_token&scope=name%20email"))
        #expect(Base64URL.decode(first.state)?.count ?? 0 >= 16)
        #expect(Base64URL.decode(first.nonce)?.count ?? 0 >= 16)
        #expect(first.state != second.state && first.nonce != second.nonce)

        let login = try harness.request(path: "/login")
        let binding = try #require(login.headerValues("Set-Cookie").first { $0.hasPrefix("asb_bind_") })
        #expect(binding.contains("SameSite=None"))
        #expect(binding.contains("Secure"))
        #expect(binding.contains("HttpOnly"))
        #expect(binding.contains("Path=/;"))
        #expect(binding.contains("Max-Age=600"))
        #expect(login.header("Cache-Control") == "no-store")
        #expect(login.header("Content-Security-Policy")?.contains("script-src 'self'") == true)
        #expect(first.document.first("//script[@src='/public/js/apple-bridge.js']") != nil)
    }

    @Test("a full sign-in through the simulator lands on the session page")
    func fullSignIn() throws {
        let harness = try BridgeHarness()
        let browser = TestBrowser(harness)
        let callback = try browser.signIn(user: .ada)
        #expect(callback.status == 303)
        #expect(callback.header("Location") == "/session")
        let sessionCookie = try #require(callback.setCookieHeader("asb_session"))
        #expect(sessionCookie.contains("HttpOnly") && sessionCookie.contains("Secure") && sessionCookie.contains("SameSite=Lax"))
        // The binding cookie stays until the attempt expires: it tells a repeated post from this browser.
        #expect(browser.cookies.keys.contains { $0.hasPrefix("asb_bind_") })

        let page = try browser.get("/session")
        #expect(page.status == 200)
        #expect(page.header("Cache-Control") == "no-store")
        let text = HTMLDocument(page.text).text
        #expect(text.contains(SimulatedUser.ada.sub))
        #expect(text.contains(SimulatedUser.ada.email))
        #expect(text.contains("Ada Lovelace"))
        #expect(try harness.userCount() == 1)
    }

    @Test("hidden email: the private relay address from the token, flagged as such")
    func privateRelay() throws {
        let harness = try BridgeHarness()
        let browser = TestBrowser(harness)
        #expect(try browser.signIn(user: .grace, hideEmail: true).status == 303)
        let text = HTMLDocument(try browser.get("/session").text).text
        #expect(text.contains(SimulatedUser.grace.privateRelayEmail))
        #expect(!text.contains(SimulatedUser.grace.email))
        #expect(text.contains("private relay"))
    }

    @Test("a second sign-in without Apple's user JSON keeps the stored name")
    func nameKept() throws {
        let harness = try BridgeHarness()
        let first = TestBrowser(harness)
        #expect(try first.signIn(user: .alan).status == 303)
        let second = TestBrowser(harness)
        let login = try second.openLogin()
        let fields = try second.authorizeAtApple(login, user: .alan)
        #expect(fields.value("user") == nil)
        #expect(try second.post("/apple_redirect", form: fields).status == 303)
        #expect(HTMLDocument(try second.get("/session").text).text.contains("Alan Turing"))
        #expect(try harness.userCount() == 1)
    }

    @Test("a spoofed email in the unsigned user JSON never reaches the account")
    func spoofedUserEmail() throws {
        let harness = try BridgeHarness()
        let browser = TestBrowser(harness)
        let login = try browser.openLogin()
        let fields = try browser.authorizeAtApple(login, user: .ada)
            .replacing("user", with: #"{"name":{"firstName":"Eve","lastName":"Mallory"},"email":"victim@example.com"}"#)
        #expect(try browser.post("/apple_redirect", form: fields).status == 303)
        let text = HTMLDocument(try browser.get("/session").text).text
        #expect(!text.contains("victim@example.com"))
        #expect(text.contains(SimulatedUser.ada.email))
    }

    @Test("sign out needs the CSRF token, then ends the session")
    func signOut() throws {
        let harness = try BridgeHarness()
        let browser = TestBrowser(harness)
        #expect(try browser.signIn().status == 303)
        let page = HTMLDocument(try browser.get("/session").text)
        let csrf = try #require(page.formFields("//form[@action='/logout']").first { $0.name == "csrf" }?.value)
        let forged = try browser.post("/logout", form: [("csrf", "forged")])
        #expect(forged.status == 403)
        #expect(try browser.get("/session").status == 200)
        // A stale tab's sign-out is explained, and the page's own Sign out button works.
        let fresh = HTMLDocument(forged.text).formFields("//form[@action='/logout']").first { $0.name == "csrf" }?.value
        #expect(fresh == csrf)
        #expect(HTMLDocument(forged.text).first("//p[@class='status-code']") == nil, "said calmly, without an error code")
        // A cross-site form carries no Lax cookie: nothing happens, and no cookie is cleared.
        let crossSite = try harness.request(method: "POST", path: "/logout",
                                                  headers: [("Content-Type", "application/x-www-form-urlencoded")], body: "")
        #expect(crossSite.status == 303)
        #expect(crossSite.headerValues("Set-Cookie").isEmpty)
        let out = try browser.post("/logout", form: [("csrf", csrf)])
        #expect(out.status == 303)
        #expect(out.header("Location") == "/login?signed_out=1")
        #expect(HTMLDocument(try browser.get("/login?signed_out=1").text).first("//p[@id='signed-out']")?.text == "You are signed out.")
        #expect(out.setCookieHeader("asb_session")?.contains("Max-Age=0") == true)
        let after = try browser.get("/session")
        #expect(after.status == 303)
        #expect(after.header("Location") == "/login")
    }

    @Test("without a session, /session sends the browser to /login")
    func sessionRequiresSignIn() throws {
        let harness = try BridgeHarness()
        let response = try harness.request(path: "/session", headers: [("Cookie", "asb_session=made-up")])
        #expect(response.status == 303)
        #expect(response.header("Location") == "/login")
    }

    @Test("a browser that dropped the cross-site cookie gets one same-origin re-POST that then succeeds")
    func droppedCookieRepost() throws {
        let harness = try BridgeHarness()
        let browser = TestBrowser(harness)
        let login = try browser.openLogin()
        let fields = try browser.authorizeAtApple(login)
        let saved = browser.cookies
        browser.forgetBindingCookies()
        let repost = try browser.post("/apple_redirect", form: fields)
        #expect(repost.status == 200)
        #expect(repost.header("Cache-Control") == "no-store")
        let page = HTMLDocument(repost.text)
        #expect(page.first("//form[@id='repost']")?.attributes["action"] == "/apple_redirect")
        #expect(page.first("//script[@src='/public/js/repost.js']") != nil)
        let reposted = page.formFields("//form[@id='repost']").map { ($0.name, $0.value) }
        #expect(reposted.value("id_token") == fields.value("id_token"))
        #expect(reposted.value("state") == login.state)
        #expect(try harness.userCount() == 0)

        // Same-origin now: the cookie goes along.
        for (name, cookie) in saved where name.hasPrefix("asb_bind_") {
            browser.set(name, cookie)
        }
        let finished = try browser.post("/apple_redirect", form: reposted)
        #expect(finished.status == 303)
        #expect(try harness.userCount() == 1)
    }

    @Test("the re-POST page escapes every field")
    func repostEscapes() throws {
        let harness = try BridgeHarness()
        let browser = TestBrowser(harness)
        let login = try browser.openLogin()
        browser.forgetBindingCookies()
        let hostile = "\"><script>alert(1)</script>"
        let response = try browser.post("/apple_redirect", form: [("state", login.state), ("id_token", hostile), ("user", hostile)])
        #expect(response.status == 200)
        #expect(!response.text.contains("<script>alert(1)"))
        let fields = HTMLDocument(response.text).formFields("//form[@id='repost']").map { ($0.name, $0.value) }
        #expect(fields.value("id_token") == hostile)
    }

    @Test("APPLE_JS_SDK=1: the page loads only the bridge script, which fetches Apple's JS SDK on a tap; the CSP allows exactly that origin")
    func jsSDKMode() throws {
        // In development against the simulator, the SDK (a stand-in) comes from the simulator.
        let harness = try BridgeHarness(["APPLE_JS_SDK": "1"])
        let simulator = "http://127.0.0.1:\(harness.simulatorPort)"
        let response = try harness.request(path: "/login")
        let page = HTMLDocument(response.text)
        let scripts = page.select("//script").compactMap { $0.attributes["src"] }
        // A CDN that never answers must not hold the page: nothing of Apple's is loaded before a tap.
        #expect(scripts == ["/public/js/apple-bridge.js"])
        #expect(page.first("//a[@id='apple-signin']")?.attributes["data-sdk-src"]
                == simulator + "/appleauth/static/jsapi/appleid/1/en_US/appleid.auth.js")
        #expect(page.first("//a[@id='apple-signin']")?.attributes["data-use-js-sdk"] == "1")
        #expect(response.header("Content-Security-Policy")?.contains("script-src 'self' \(simulator);") == true)
        // Only the login page may load it.
        let other = try harness.request(path: "/no-such-page")
        #expect(other.header("Content-Security-Policy")?.contains("script-src 'self';") == true)
        let plainHarness = try BridgeHarness()
        let plain = try plainHarness.request(path: "/login")
        #expect(plain.header("Content-Security-Policy")?.contains("script-src 'self';") == true)
    }

    @Test("/metrics counts sign-ins by flow and rejections by reason, in Prometheus text")
    func metrics() throws {
        let harness = try BridgeHarness()
        #expect(try TestBrowser(harness).signIn().status == 303)
        let browser = TestBrowser(harness)
        let login = try browser.openLogin()
        _ = try browser.post("/apple_redirect", form: [("state", login.state), ("id_token", "garbage")])
        let metrics = try harness.request(path: "/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
        let lines = metrics.text.split(separator: "\n").map(String.init)
        #expect(lines.contains("bridge_sign_ins_total{flow=\"web\"} 1"))
        #expect(lines.contains("bridge_callback_rejections_total{reason=\"malformed_token\"} 1"))
        #expect(lines.contains("# TYPE bridge_sign_ins_total counter"))
        #expect(lines.contains { $0.hasPrefix("bridge_jwks_fetches_total ") })
    }
}
