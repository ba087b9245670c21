import AppleIDSimulator
@testable import Bridge
import BridgeSettings
import Foundation
import HTTPServer
import JOSE
import JSON
import SignIn
import Storage
import Testing
import TestSupport
import WebRoutes

/// `GET /auth/verify` as a reverse proxy asks it (nginx's `auth_request`, Caddy's `forward_auth`, Traefik's
/// `forwardAuth`): the browser's cookies passed on, the answer's status and `X-Auth-Request-*` headers read.
@Suite("Forward auth: GET /auth/verify")
struct ForwardAuthTests {
    /// What the proxy sends: the browser's cookies for `/`, nothing else of the browser's.
    static func verify(_ browser: TestBrowser, query: String = "") throws -> RawHTTPResponse {
        try browser.harness.request(path: "/auth/verify" + query, headers: browser.cookieHeader(for: "/"))
    }

    static func member(_ harness: BridgeHarness, _ user: SimulatedUser) throws -> User {
        try #require(try harness.app.store.read { try $0.user(provider: User.appleProvider, providerUserID: user.sub) })
    }

    /// A 401 or 403 says nothing of the person and is never kept.
    static func expectClosed(_ response: RawHTTPResponse, _ status: Int, hiding secrets: [String] = [],
                             sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == status, sourceLocation: sourceLocation)
        #expect(response.header("Cache-Control") == "no-store", sourceLocation: sourceLocation)
        #expect(response.header("X-Auth-Request-User") == nil, sourceLocation: sourceLocation)
        #expect(response.header("X-Auth-Request-Email") == nil, sourceLocation: sourceLocation)
        for secret in secrets { #expect(!response.text.contains(secret), sourceLocation: sourceLocation) }
    }

    @Test("without a session 401 (no-store, no personal data); a made-up session or two session cookies are not believed")
    func withoutSession() throws {
        let harness = try BridgeHarness()
        let browser = TestBrowser(harness)
        Self.expectClosed(try Self.verify(browser), 401)
        #expect(try Self.verify(browser).header("Content-Type")?.hasPrefix("text/plain") == true)
        #expect(try browser.signIn(user: .ada).status == 303)
        let session = harness.app.configuration.cookieNames.session
        let real = try #require(browser.cookies[session])
        #expect(try Self.verify(browser).status == 200)

        browser.set(session, .init(value: SecretTokens.random(), path: "/"))
        Self.expectClosed(try Self.verify(browser), 401)
        // The real one and a planted one: neither is believed.
        let twice = try harness.request(path: "/auth/verify", headers: [
            ("Cookie", "\(session)=\(real.value); \(session)=\(SecretTokens.random())"),
        ])
        Self.expectClosed(twice, 401)
    }

    @Test("signed in: 200 with the member id, email and groups; ?group= is 403 outside the group, 200 inside; signed out: 401")
    func signedIn() throws {
        let harness = try BridgeHarness()
        let browser = TestBrowser(harness)
        #expect(try browser.signIn(user: .ada).status == 303)
        let ada = try Self.member(harness, .ada)

        let open = try Self.verify(browser)
        #expect(open.status == 200)
        #expect(open.header("Cache-Control") == "no-store")
        #expect(open.header("X-Auth-Request-User") == String(ada.id))
        #expect(open.header("X-Auth-Request-Email") == SimulatedUser.ada.email)
        #expect(open.header("X-Auth-Request-Groups") == "", "in no group: present, and empty")

        Self.expectClosed(try Self.verify(browser, query: "?group=staff"), 403,
                          hiding: [SimulatedUser.ada.email, SimulatedUser.ada.sub, "Ada"])
        _ = try harness.app.store.write { try $0.addGroup(userID: ada.id, group: "staff", now: Date()) }
        _ = try harness.app.store.write { try $0.addGroup(userID: ada.id, group: "admins", now: Date()) }
        let inside = try Self.verify(browser, query: "?group=staff")
        #expect(inside.status == 200)
        #expect(inside.header("X-Auth-Request-Groups") == "admins,staff")
        #expect(try Self.verify(browser, query: "?group=finance,admins").status == 200, "any of the groups listed admits")
        #expect(try Self.verify(browser, query: "?group=Staff").status == 403, "group names compare exactly")

        let page = try browser.get("/session")
        let csrf = try #require(HTMLDocument(page.text).first("//form[@action='/logout']//input[@name='csrf']")?.attributes["value"])
        #expect(try browser.post("/logout", form: [("csrf", csrf)]).status == 303)
        Self.expectClosed(try Self.verify(browser), 401)
    }

    @Test("an expired session is never believed")
    func expiredSession() throws {
        let harness = try BridgeHarness()
        let browser = TestBrowser(harness)
        #expect(try browser.signIn(user: .ada).status == 303)
        #expect(try Self.verify(browser).status == 200)
        harness.clock.advance(by: SessionIssuer.browserSessionLifetime + 1)
        Self.expectClosed(try Self.verify(browser), 401)
    }

    @Test("a malformed ?group= is 400, in plain text", arguments: ["", "a b", "staff,", ",staff", "st%0Aaff", "-staff"])
    func malformedGroup(group: String) throws {
        let harness = try BridgeHarness(startSimulator: false)
        let response = try harness.request(path: "/auth/verify?group=" + group)
        #expect(response.status == 400)
        #expect(response.header("Cache-Control") == "no-store")
    }

    @Test("not counted by the sign-in rate limit: a proxy asks on every request, a login page is limited")
    func notRateLimited() throws {
        let harness = try BridgeHarness(startSimulator: false, signInRequestsPerMinute: 1)
        let browser = TestBrowser(harness)
        let verified = try (0..<30).map { _ in try Self.verify(browser).status }
        #expect(Set(verified) == [401])
        let logins = try (0..<30).map { _ in try browser.get("/login").status }
        #expect(logins.contains(429), "the limit is in force for what it counts")
    }

    @Test("answers no other method, in plain text with no-store; a path under /auth/ it does not know is its 404")
    func otherMethodsAndPaths() throws {
        let harness = try BridgeHarness(startSimulator: false)
        let post = try harness.request(method: "POST", path: "/auth/verify")
        #expect(post.status == 405)
        #expect(post.header("Cache-Control") == "no-store")
        #expect(post.header("Content-Type")?.hasPrefix("text/plain") == true)
        let unknown = try harness.request(path: "/auth/other")
        #expect(unknown.status == 404)
        #expect(unknown.header("Content-Type")?.hasPrefix("text/plain") == true)
    }
}

/// `apple-signin-bridge invite`, `GET /invite?token=…` and the sign-in that spends it.
@Suite("Group invitations", .serialized)
struct GroupInvitationTests {
    static func environment(_ harness: BridgeHarness, secretKey: String) -> [String: String] {
        [
            "BRIDGE_DATABASE": "sqlite:\(harness.databasePath)", "BRIDGE_SECRET_KEY": secretKey,
            "BRIDGE_PUBLIC_URL": harness.app.configuration.publicURL,
            "APPLE_SERVICES_ID": BridgeHarness.servicesID, "APPLE_ID_URL": "http://127.0.0.1:\(harness.simulatorPort)",
        ]
    }

    /// The path and query of a printed link.
    static func pathOf(_ link: String) throws -> String {
        let url = try #require(URLComponents(string: link.trimmingCharacters(in: .whitespacesAndNewlines)))
        return url.path + "?" + (url.percentEncodedQuery ?? "")
    }

    @Test("invite prints a single-use link: the first person who signs in through it joins the group, nobody else can use it")
    func singleUse() throws {
        let secretKey = Data(SecureRandom.bytes(32)).base64EncodedString()
        let harness = try BridgeHarness(["BRIDGE_SECRET_KEY": secretKey])
        let invited = try RunningProcess(["invite", "--group", "staff", "--expires", "2d"],
                                         environment: Self.environment(harness, secretKey: secretKey)).wait()
        #expect(invited.status == 0, "stderr: \(invited.errors)")
        #expect(invited.output.hasPrefix(harness.app.configuration.publicURL + "/invite?token="))
        #expect(invited.errors.contains("event=invitation_created group=staff"))
        let link = try Self.pathOf(invited.output)
        #expect(!invited.errors.contains(String(link.split(separator: "=").last ?? "")), "the token is not logged")

        // Ada opens it: the login page, with the invitation kept for the callback only.
        let ada = TestBrowser(harness)
        let opened = try ada.get(link)
        #expect(opened.status == 303)
        #expect(opened.header("Location") == "/login")
        let cookie = try #require(opened.setCookieHeader(Invitations.cookieName))
        #expect(cookie.contains("Path=/apple_redirect") && cookie.contains("HttpOnly") && cookie.contains("SameSite=None"))
        let token = try #require(ada.cookies[Invitations.cookieName]?.value)
        let signedIn = try ada.signIn(user: .ada)
        #expect(signedIn.status == 303)
        #expect(signedIn.headerValues("Set-Cookie").contains { $0.hasPrefix(Invitations.cookieName + "=;") && $0.contains("Max-Age=0") })
        let adaAnswer = try ForwardAuthTests.verify(ada, query: "?group=staff")
        #expect(adaAnswer.status == 200)
        #expect(adaAnswer.header("X-Auth-Request-Groups") == "staff")

        // Anyone else who opens it is told it cannot be used, and nothing is kept.
        let grace = TestBrowser(harness)
        let refused = try grace.get(link)
        #expect(refused.status == 410)
        #expect(refused.text.contains("This invitation cannot be used"))
        #expect(refused.setCookieHeader(Invitations.cookieName) == nil)
        // One who got the token before it was spent (two people, one link, at once) still signs in, without the group.
        grace.set(Invitations.cookieName, .init(value: token, path: Invitations.cookiePath))
        #expect(try grace.signIn(user: .grace).status == 303)
        #expect(try ForwardAuthTests.verify(grace).status == 200)
        ForwardAuthTests.expectClosed(try ForwardAuthTests.verify(grace, query: "?group=staff"), 403)
        #expect(try harness.app.store.read { try $0.groups(userID: ForwardAuthTests.member(harness, .grace).id) }.isEmpty)
    }

    @Test("an expired, unknown or cut-short invitation is refused with a page, and a sign-in without one joins nothing")
    func unusable() throws {
        let harness = try BridgeHarness()
        let store = harness.app.store
        let expired = try Invitations.create(group: "staff", lifetime: 60, publicURL: "", store: store, now: harness.clock.clock.now)
        let browser = TestBrowser(harness)
        harness.clock.advance(by: 61)
        #expect(try browser.get(try Self.pathOf(expired.link)).status == 410)
        #expect(try browser.get("/invite?token=" + SecretTokens.random()).status == 410)
        #expect(try browser.get(String(try Self.pathOf(expired.link).dropLast(3))).status == 410)
        #expect(try browser.get("/invite").status == 410)
        #expect(browser.cookies[Invitations.cookieName] == nil)
        #expect(try browser.signIn(user: .ada).status == 303)
        #expect(try store.read { try $0.groups(userID: ForwardAuthTests.member(harness, .ada).id) }.isEmpty)
    }

    @Test("a refused sign-in spends no invitation: a replayed callback leaves it waiting, the next sign-in spends it")
    func failedSignInSpendsNothing() throws {
        let harness = try BridgeHarness()
        let made = try Invitations.create(group: "staff", lifetime: 600, publicURL: "", store: harness.app.store,
                                          now: harness.clock.clock.now)
        let first = TestBrowser(harness)
        let fields = try first.authorizeAtApple(try first.openLogin(), user: .ada)
        #expect(try first.post("/apple_redirect", form: fields).status == 303)
        // The same callback again, now carrying the invitation: the login attempt is spent, the sign-in refused.
        first.forget(harness.app.configuration.cookieNames.session)
        #expect(try first.get(try Self.pathOf(made.link)).status == 303)
        let replayed = try first.post("/apple_redirect", form: fields)
        #expect(replayed.status >= 400)
        let tokenHash = try #require(first.cookies[Invitations.cookieName].map { SecretTokens.digest($0.value) })
        #expect(try harness.app.store.read { try $0.groupInvitation(tokenHash: tokenHash) }?.redeemedAt == nil)
        #expect(try harness.app.store.read { try $0.groups(userID: ForwardAuthTests.member(harness, .ada).id) }.isEmpty)
        // A sign-in that succeeds then spends it.
        #expect(try first.signIn(user: .ada).status == 303)
        #expect(try ForwardAuthTests.verify(first, query: "?group=staff").status == 200)
    }

    @Test("an invitation link passes return_to on to the login page, which checks it")
    func returnTo() throws {
        let harness = try BridgeHarness(["BRIDGE_RETURN_URLS": "https://app.example.com/*"])
        let made = try Invitations.create(group: "staff", lifetime: 600, publicURL: "", store: harness.app.store,
                                          now: harness.clock.clock.now)
        let browser = TestBrowser(harness)
        let opened = try browser.get(try Self.pathOf(made.link) + "&return_to=https%3A%2F%2Fapp.example.com%2Fwiki%2F")
        #expect(opened.header("Location") == "/login?return_to=https%3A%2F%2Fapp.example.com%2Fwiki%2F")
        let login = try browser.openLogin(try #require(opened.header("Location")))
        let landed = try browser.post("/apple_redirect", form: try browser.authorizeAtApple(login, user: .ada))
        #expect(landed.header("Location") == "https://app.example.com/wiki/")
        #expect(try ForwardAuthTests.verify(browser, query: "?group=staff").status == 200)
    }

    @Test("invite refuses a missing or malformed group or duration, and stores nothing",
          arguments: [["invite"], ["invite", "--group", "a b"], ["invite", "--group", "staff", "--expires", "0d"],
                      ["invite", "--group", "staff", "--expires", "400d"], ["invite", "--group", "staff", "--expires", "7"],
                      ["invite", "--group", "staff", "--id", "3"]])
    func inviteRefuses(arguments: [String]) throws {
        let secretKey = Data(SecureRandom.bytes(32)).base64EncodedString()
        let harness = try BridgeHarness(["BRIDGE_SECRET_KEY": secretKey], startSimulator: false)
        let result = try RunningProcess(arguments, environment: Self.environment(harness, secretKey: secretKey)).wait()
        #expect(result.status == 2)
        #expect(result.output.isEmpty)
    }

    @Test("members groups shows a member's groups, adds and removes one; export lists them; an unknown member is exit 3")
    func membersGroups() throws {
        let secretKey = Data(SecureRandom.bytes(32)).base64EncodedString()
        let harness = try BridgeHarness(["BRIDGE_SECRET_KEY": secretKey])
        #expect(try TestBrowser(harness).signIn(user: .ada).status == 303)
        let id = String(try ForwardAuthTests.member(harness, .ada).id)
        func members(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
            try RunningProcess(["members"] + arguments, environment: Self.environment(harness, secretKey: secretKey)).wait()
        }
        func groups(_ output: String) throws -> [String]? {
            try JSONValue.parse(output)["groups"]?.arrayValue?.compactMap(\.stringValue)
        }
        #expect(try groups(try members(["groups", "--id", id]).output) == [])
        let added = try members(["groups", "--id", id, "--add", "staff"])
        #expect(added.status == 0, "stderr: \(added.errors)")
        #expect(try groups(added.output) == ["staff"])
        #expect(added.errors.contains("event=member_request action=groups member_id=\(id) outcome=added"))
        #expect(try groups(try members(["groups", "--id", id, "--add", "admins"]).output) == ["admins", "staff"])
        let export = try JSONValue.parse(try members(["export", "--id", id]).output)
        #expect(export["groups"]?.arrayValue?.compactMap { $0["group"]?.stringValue } == ["admins", "staff"])
        #expect(try groups(try members(["groups", "--id", id, "--remove", "admins"]).output) == ["staff"])
        #expect(try members(["groups", "--id", "999"]).status == 3)
        #expect(try members(["groups", "--id", id, "--add", "a,b"]).status == 2)
        #expect(try members(["groups", "--id", id, "--add", "x", "--remove", "y"]).status == 2)
    }
}

/// BRIDGE_COOKIE_DOMAIN: the two set-ups of docs/forward-auth.md.
@Suite("The session cookie's scope")
struct CookieScopeTests {
    @Test("bridge on a sibling host: __Secure-asb_session with Domain=the parent, the binding cookie stays __Host-; /auth/verify believes it and sign-out forgets it in the same scope")
    func siblingHost() throws {
        let harness = try BridgeHarness(["BRIDGE_PUBLIC_URL": "https://login.example.test",
                                         "BRIDGE_COOKIE_DOMAIN": "example.test"])
        let browser = TestBrowser(harness)
        let login = try browser.get("/login")
        #expect(login.headerValues("Set-Cookie").contains { $0.hasPrefix("__Host-asb_bind_") && !$0.contains("Domain=") })
        let callback = try browser.post("/apple_redirect", form: try browser.authorizeAtApple(
            try browser.openLogin(), user: .ada))
        let session = try #require(callback.setCookieHeader("__Secure-asb_session"))
        #expect(session.contains("; Domain=example.test;") && session.contains("; Secure") && session.contains("SameSite=Lax"))
        #expect(callback.setCookieHeader("__Host-asb_session") == nil)
        #expect(try ForwardAuthTests.verify(browser).status == 200)

        let page = try browser.get("/session")
        #expect(page.status == 200)
        let csrf = try #require(HTMLDocument(page.text).first("//form[@action='/logout']//input[@name='csrf']")?.attributes["value"])
        let out = try browser.post("/logout", form: [("csrf", csrf)])
        let forgotten = try #require(out.headerValues("Set-Cookie").first { $0.hasPrefix("__Secure-asb_session=") })
        #expect(forgotten.contains("Max-Age=0") && forgotten.contains("; Domain=example.test;"))
    }

    @Test("bridge on the application's own host: the session cookie stays __Host-, without a Domain")
    func sameHost() throws {
        let harness = try BridgeHarness(["BRIDGE_PUBLIC_URL": "https://app.example.test"])
        let browser = TestBrowser(harness)
        let callback = try browser.signIn(user: .ada)
        let session = try #require(callback.setCookieHeader("__Host-asb_session"))
        #expect(!session.contains("Domain="))
        #expect(try ForwardAuthTests.verify(browser).status == 200)
    }

    @Test("BRIDGE_COOKIE_DOMAIN accepted: the host or a domain above it, a leading dot dropped",
          arguments: [("https://login.example.com", "example.com"), ("https://login.example.com", ".example.com"),
                      ("https://login.example.com", "login.example.com"), ("https://a.b.example.co.uk", "example.co.uk")])
    func accepted(publicURL: String, domain: String) throws {
        let configuration = try BridgeConfiguration(values: [
            "BRIDGE_PUBLIC_URL": publicURL, "BRIDGE_COOKIE_DOMAIN": domain,
            "BRIDGE_SECRET_KEY": Data(repeating: 7, count: 32).base64EncodedString(),
            "APPLE_SERVICES_ID": BridgeHarness.servicesID,
        ], mode: .production)
        #expect(configuration.cookieDomain == (domain.hasPrefix(".") ? String(domain.dropFirst()) : domain))
        #expect(configuration.cookieNames.session == "__Secure-asb_session")
        #expect(configuration.cookieNames.bindingPrefix == "__Host-asb_bind_")
    }

    @Test("BRIDGE_COOKIE_DOMAIN refused, naming the key: not above the host, one label, an address, upper case, http",
          arguments: [("https://login.example.com", "other.com"), ("https://login.example.com", "ample.com"),
                      ("https://login.example.com", "com"), ("https://login.example.com", "Example.com"),
                      ("https://10.0.0.1", "0.0.1"), ("https://login.example.com", "example..com"),
                      ("https://login.example.com", "exa mple.com"), ("http://127.0.0.1:8080", "0.0.1")])
    func refused(publicURL: String, domain: String) {
        #expect(configurationProblem(["BRIDGE_PUBLIC_URL": publicURL, "BRIDGE_COOKIE_DOMAIN": domain])?.key == "BRIDGE_COOKIE_DOMAIN")
    }
}
