import Foundation
import HTTPServer
import JSON
import OpenIDProvider
import Testing
import TestSupport

/// An OpenID client's sign-in goes through the bridge's own login page and session: the page the webview bridge,
/// Apple JS and popup mode work from, single sign-on for a browser already signed in (within `prompt`, `max_age`
/// and `id_token_hint`), the form_post response mode, the `profile` scope, and RP-Initiated Logout.
@Suite("OpenID provider: the login page, single sign-on and logout", .serialized)
struct ProviderSingleSignOnTests {
    static let otherClient = "auth-proxy"

    /// The ID token a code redeems to, verified.
    func idTokenClaims(_ party: RelyingParty, _ response: RawHTTPResponse, client: String = RelyingParty.publicClient,
                       redirectURI: String = RelyingParty.appRedirect) throws -> [String: JSONValue] {
        let code = try #require(RelyingParty.parameters(response)["code"])
        let tokens = client == RelyingParty.confidentialClient
            ? try party.token([("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI)],
                              basic: (client, RelyingParty.proxySecret))
            : try party.redeem(code, client: client, redirectURI: redirectURI)
        #expect(tokens.status == 200, "\(tokens.body)")
        return try party.verifiedClaims(try #require(tokens.body["id_token"]?.stringValue))
    }

    @Test("without a session, /oauth/authorize shows the login page: the sign-in link, the webview bridge's state and nonce, language links that keep the request")
    func loginPage() throws {
        let party = try RelyingParty()
        let response = try party.browser.get(party.authorizePath())
        #expect(response.status == 200)
        let login = try party.browser.loginPage(response)
        #expect(login.authorizeURL.hasPrefix("http://127.0.0.1:\(party.harness.simulatorPort)/auth/authorize?"))
        #expect(login.document.first("//script[@src='/public/js/apple-bridge.js']") != nil)
        #expect(response.headerValues("Set-Cookie").contains { $0.hasPrefix("asb_bind_") })
        let korean = try #require(login.document.first("//a[@hreflang='ko']")?.attributes["href"])
        #expect(korean.hasPrefix(ProviderEndpoints.authorization + "?") && korean.contains("client_id=android-app")
            && korean.hasSuffix("lang=ko"))
        #expect(try party.browser.get(korean).status == 200)
    }

    @Test("a second client's sign-in in the same browser completes without Apple, for the same member, its auth_time the sign-in's")
    func singleSignOn() throws {
        let party = try RelyingParty()
        let first = try party.signIn(party.authorizePath())
        let firstClaims = try idTokenClaims(party, first)
        party.harness.clock.advance(by: 120)
        let path = party.authorizePath(client: Self.otherClient, redirectURI: RelyingParty.proxyRedirect, pkce: false)
        let second = try party.browser.get(path)
        #expect(second.status == 303)
        #expect(second.header("Location")?.hasPrefix(RelyingParty.proxyRedirect + "?") == true)
        #expect(RelyingParty.parameters(second)["state"] == "client-state-1")
        let claims = try idTokenClaims(party, second, client: Self.otherClient, redirectURI: RelyingParty.proxyRedirect)
        #expect(claims["sub"] == firstClaims["sub"])
        #expect(claims["auth_time"] == firstClaims["auth_time"])
        #expect((claims["iat"]?.doubleValue ?? 0) - (claims["auth_time"]?.doubleValue ?? 0) >= 120)
        #expect(claims["nonce"] == "client-nonce-1")
        #expect(try party.harness.userCount() == 1)
    }

    @Test("prompt=none: a code with a session, login_required without one; prompt=login and an old session ask for a new sign-in")
    func promptAndMaxAge() throws {
        let party = try RelyingParty()
        let noSession = try party.browser.get(party.authorizePath(extra: [("prompt", "none")]))
        #expect(noSession.status == 303 && RelyingParty.parameters(noSession)["error"] == "login_required")
        #expect(RelyingParty.parameters(noSession)["state"] == "client-state-1")
        _ = try party.signIn(party.authorizePath())
        let silent = try party.browser.get(party.authorizePath(extra: [("prompt", "none")]))
        #expect(silent.status == 303 && RelyingParty.parameters(silent)["code"] != nil)
        #expect(try party.browser.get(party.authorizePath(extra: [("prompt", "login")])).status == 200)
        #expect(try party.browser.get(party.authorizePath(extra: [("prompt", "select_account")])).status == 200)
        party.harness.clock.advance(by: 600)
        #expect(try party.browser.get(party.authorizePath(extra: [("max_age", "3600")])).status == 303)
        #expect(try party.browser.get(party.authorizePath(extra: [("max_age", "300")])).status == 200)
        let tooOld = try party.browser.get(party.authorizePath(extra: [("max_age", "300"), ("prompt", "none")]))
        #expect(RelyingParty.parameters(tooOld)["error"] == "login_required")
        for refused in [[("request", "eyJ.x.y")], [("request_uri", "https://rp.example/r")]] {
            let answer = try party.browser.get(party.authorizePath(extra: refused))
            #expect(RelyingParty.parameters(answer)["error"]?.hasSuffix("_not_supported") == true)
        }
    }

    @Test("id_token_hint: the member it names gets a code; another member with prompt=none is login_required; a forged hint is invalid_request")
    func idTokenHint() throws {
        let party = try RelyingParty()
        let first = try party.signIn(party.authorizePath())
        let code = try #require(RelyingParty.parameters(first)["code"])
        let tokens = try party.redeem(code)
        let hint = try #require(tokens.body["id_token"]?.stringValue)
        let same = try party.browser.get(party.authorizePath(extra: [("prompt", "none"), ("id_token_hint", hint)]))
        #expect(RelyingParty.parameters(same)["code"] != nil)
        // The same hint in another browser, whose session is another member's.
        let other = TestBrowser(party.harness)
        let login = try other.openLogin()
        #expect(try other.post("/apple_redirect", form: try other.authorizeAtApple(login, user: .grace)).status == 303)
        let mismatch = try other.get(party.authorizePath(extra: [("prompt", "none"), ("id_token_hint", hint)]))
        #expect(RelyingParty.parameters(mismatch)["error"] == "login_required")
        #expect(try other.get(party.authorizePath(extra: [("id_token_hint", hint)])).status == 200)
        let forged = String(hint.dropLast(4)) + "AAAA"
        let refused = try other.get(party.authorizePath(extra: [("id_token_hint", forged)]))
        #expect(RelyingParty.parameters(refused)["error"] == "invalid_request")
    }

    @Test("codes from the session share the sign-in rate limit: a signed-in browser cannot write codes without bound")
    func singleSignOnRateLimited() throws {
        let party = try RelyingParty(signInRequestsPerMinute: 60)
        _ = try party.signIn(party.authorizePath())
        var statuses: [Int] = []
        for _ in 0..<30 {
            let answer = try party.browser.get(party.authorizePath())
            statuses.append(answer.status)
            if answer.status == 429 {
                #expect(answer.header("Retry-After") != nil && answer.header("Content-Type")?.hasPrefix("text/html") == true)
                break
            }
        }
        #expect(statuses.first == 303 && statuses.last == 429, "\(statuses)")
    }

    @Test("POST /oauth/authorize takes its parameters from the form, as GET does from the query")
    func postAuthorize() throws {
        let party = try RelyingParty()
        let query = String(party.authorizePath().split(separator: "?", maxSplits: 1)[1])
        let fields = FormFields(urlEncoded: query).pairs.map { ($0.name, $0.value) }
        let page = try party.browser.post(ProviderEndpoints.authorization, form: fields)
        #expect(page.status == 200)
        let login = try party.browser.loginPage(page)
        let answer = try party.browser.post("/apple_redirect", form: try party.browser.authorizeAtApple(login))
        #expect(answer.status == 303 && RelyingParty.parameters(answer)["code"] != nil)
        let unknown = try party.browser.post(ProviderEndpoints.authorization, form: fields.replacing("client_id", with: "nobody"))
        #expect(unknown.status == 400 && unknown.header("Content-Type")?.hasPrefix("text/html") == true)
    }

    @Test("a webview's native sign-in finishes an OpenID client's authorization: the page's state and nonce, a bundle-ID token posted back")
    func webviewNativePost() throws {
        let party = try RelyingParty()
        let login = try party.browser.openLogin(party.authorizePath())
        let token = try party.harness.token(audience: BridgeHarness.bundleID, nonce: login.nonce)
        // As seed 004's app does: the fields in the query string of a bodiless POST, inside the webview.
        let query = FormFields([("state", login.state), ("id_token", token)]).urlEncoded
        let response = try party.harness.request(method: "POST", path: "/apple_redirect?" + query,
                                                 headers: party.browser.cookieHeader(for: "/apple_redirect"))
        #expect(response.status == 303)
        #expect(response.header("Location")?.hasPrefix(RelyingParty.appRedirect + "?") == true)
        let claims = try idTokenClaims(party, response)
        #expect(claims["nonce"] == "client-nonce-1")
    }

    @Test("response_mode=form_post: the code, state and iss arrive in a form posted to the redirect URI; so does an error")
    func formPost() throws {
        let party = try RelyingParty()
        let callback = try party.signIn(party.authorizePath(client: Self.otherClient, redirectURI: RelyingParty.proxyRedirect,
                                                            pkce: false, extra: [("response_mode", "form_post")]))
        #expect(callback.status == 200)
        #expect(callback.header("Cache-Control") == "no-store")
        #expect(callback.header("Content-Security-Policy")?.contains("form-action 'self' https://proxy.example.com") == true)
        let document = HTMLDocument(callback.text)
        #expect(document.first("//form[@id='repost']")?.attributes["action"] == RelyingParty.proxyRedirect)
        let fields = Dictionary(document.formFields().map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
        #expect(fields["state"] == "client-state-1" && fields["iss"] == party.issuer && fields["code"] != nil)
        let silent = try party.browser.get(party.authorizePath(extra: [("response_mode", "form_post"), ("prompt", "none")]))
        #expect(silent.status == 200 && HTMLDocument(silent.text).first("//input[@name='code']") != nil)
        let refused = try party.browser.get(party.authorizePath(pkce: false, extra: [("response_mode", "form_post")]))
        #expect(refused.status == 200)
        #expect(HTMLDocument(refused.text).first("//input[@name='error']")?.attributes["value"] == "invalid_request")
    }

    @Test("the profile scope carries the name, as name does; discovery lists it with form_post and the end_session_endpoint")
    func profileScope() throws {
        let party = try RelyingParty()
        let callback = try party.signIn(party.authorizePath(scope: "openid profile email"))
        let code = try #require(RelyingParty.parameters(callback)["code"])
        let tokens = try party.redeem(code)
        #expect(tokens.body["scope"]?.stringValue == "openid email profile")
        let claims = try party.verifiedClaims(try #require(tokens.body["id_token"]?.stringValue))
        #expect(claims["name"]?.stringValue?.isEmpty == false)
        let discovery = try JSONValue.parse(try party.harness.request(path: ProviderEndpoints.discovery).body)
        #expect(discovery["scopes_supported"]?.arrayValue?.contains(.string("profile")) == true)
        #expect(discovery["response_modes_supported"]?.arrayValue?.contains(.string("form_post")) == true)
        #expect(discovery["end_session_endpoint"]?.stringValue == party.issuer + ProviderEndpoints.endSession)
    }

    @Test("RP-Initiated Logout: a hint naming the member signs out at once and returns to a registered URI with state; an unregistered URI is refused; without a hint the person is asked")
    func endSession() throws {
        let party = try RelyingParty()
        let first = try party.signIn(party.authorizePath(client: Self.otherClient, redirectURI: RelyingParty.proxyRedirect, pkce: false))
        let code = try #require(RelyingParty.parameters(first)["code"])
        let tokens = try party.token([("grant_type", "authorization_code"), ("code", code), ("redirect_uri", RelyingParty.proxyRedirect)],
                                     basic: (Self.otherClient, RelyingParty.proxySecret))
        let hint = try #require(tokens.body["id_token"]?.stringValue)
        func logout(_ query: [(String, String)], _ browser: TestBrowser) throws -> RawHTTPResponse {
            try browser.get(ProviderEndpoints.endSession + "?" + FormFields(query).urlEncoded)
        }
        let unregistered = try logout([("id_token_hint", hint), ("post_logout_redirect_uri", "https://evil.example.com/")], party.browser)
        #expect(unregistered.status == 400 && unregistered.header("Location") == nil)
        #expect(try party.browser.get("/session").status == 200)

        // Without a hint: a page that asks, whose form posts the same request back with the session's CSRF token.
        let asked = try logout([("client_id", Self.otherClient), ("post_logout_redirect_uri", RelyingParty.proxySignedOut),
                                ("state", "rp-state")], party.browser)
        #expect(asked.status == 200)
        let form = HTMLDocument(asked.text)
        #expect(form.first("//form")?.attributes["action"] == ProviderEndpoints.endSession)
        #expect(try party.browser.get("/session").status == 200)
        let forged = try party.browser.post(ProviderEndpoints.endSession, form: [("client_id", Self.otherClient), ("csrf", "nope")])
        #expect(forged.status == 200 && HTMLDocument(forged.text).first("//form") != nil)
        let confirmed = try party.browser.post(ProviderEndpoints.endSession, form: form.formFields().map { ($0.name, $0.value) })
        #expect(confirmed.status == 303 && confirmed.header("Location") == RelyingParty.proxySignedOut + "?state=rp-state")
        #expect(try party.browser.get("/session").status == 303)

        // With a hint naming the signed-in member: at once.
        _ = try party.signIn(party.authorizePath(client: Self.otherClient, redirectURI: RelyingParty.proxyRedirect, pkce: false))
        let atOnce = try logout([("id_token_hint", hint), ("post_logout_redirect_uri", RelyingParty.proxySignedOut)], party.browser)
        #expect(atOnce.status == 303 && atOnce.header("Location") == RelyingParty.proxySignedOut)
        #expect(atOnce.headerValues("Set-Cookie").contains { $0.hasPrefix("asb_session=") && $0.contains("Max-Age=0") })
        #expect(try party.browser.get("/session").status == 303)
        // Nobody signed in: straight back.
        let nobody = try logout([("client_id", Self.otherClient), ("post_logout_redirect_uri", RelyingParty.proxySignedOut)], TestBrowser(party.harness))
        #expect(nobody.status == 303 && nobody.header("Location") == RelyingParty.proxySignedOut)
        let plain = try logout([], TestBrowser(party.harness))
        #expect(plain.status == 303 && plain.header("Location") == "/login?signed_out=1")
    }
}
