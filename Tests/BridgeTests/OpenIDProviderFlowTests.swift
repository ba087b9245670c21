import Foundation
import HTTPServer
import JOSE
import JSON
import OpenIDProvider
import Testing
import TestSupport

/// A relying party and its browser against the real server and the Apple ID simulator: authorization, the consent
/// page at "Apple", the code on the redirect URI, the token endpoint, and what the tokens say.
final class RelyingParty {
    static let publicClient = "android-app"
    static let appRedirect = "com.example.app:/oauth2redirect"
    static let confidentialClient = "auth-proxy"
    static let proxyRedirect = "https://proxy.example.com/oauth2/callback"
    static let proxySecret = "proxy-secret-for-tests"
    static let proxySignedOut = "https://proxy.example.com/signed-out"
    static let firstPartyClient = "own-app"
    static let firstPartyRedirect = "https://own.example.com/oauth2redirect"

    let harness: BridgeHarness
    let browser: TestBrowser
    let clientsFile: String
    let verifier = SecureRandom.base64URLToken(byteCount: 32)

    init(settings: [String: String] = [:], signInRequestsPerMinute: Int = 6000, listener: ServerConfiguration? = nil,
         listening: Bool = false) throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("clients-\(UUID().uuidString).json").path
        let clients = """
            [{"client_id": "\(Self.publicClient)", "name": "Android app", "redirect_uris": ["\(Self.appRedirect)", "http://127.0.0.1/callback"]},
             {"client_id": "\(Self.confidentialClient)", "name": "Auth proxy", "redirect_uris": ["\(Self.proxyRedirect)"],
              "client_secret_sha256": "\(SHA256.hexDigest(Self.proxySecret))", "post_logout_redirect_uris": ["\(Self.proxySignedOut)"]},
             {"client_id": "\(Self.firstPartyClient)", "name": "Our own app", "redirect_uris": ["\(Self.firstPartyRedirect)"],
              "first_party": true}]
            """
        try clients.write(toFile: file, atomically: true, encoding: .utf8)
        clientsFile = file
        harness = try BridgeHarness(["BRIDGE_CLIENTS_FILE": file].merging(settings) { _, new in new },
                                    signInRequestsPerMinute: signInRequestsPerMinute, listener: listener,
                                    listening: listening)
        browser = TestBrowser(harness)
    }

    var issuer: String { harness.app.configuration.publicURL }

    func authorizePath(client: String = publicClient, redirectURI: String = appRedirect, scope: String = "openid email name",
                       pkce: Bool = true, method: String = "S256", extra: [(String, String)] = []) -> String {
        var query: [(String, String)] = [("client_id", client), ("redirect_uri", redirectURI), ("response_type", "code"),
                                         ("scope", scope), ("state", "client-state-1"), ("nonce", "client-nonce-1")]
        if pkce { query += [("code_challenge", PKCE.challenge(for: verifier)), ("code_challenge_method", method)] }
        return ProviderEndpoints.authorization + "?" + FormFields(query + extra).urlEncoded
    }

    /// Authorize (the bridge's login page) → Apple's consent → callback; returns the callback's response (a
    /// redirect to the client).
    /// A browser the bridge already signed in gets its code at once (single sign-on): that answer is returned.
    func signIn(_ path: String, cancel: Bool = false) throws -> RawHTTPResponse {
        let start = try browser.get(path)
        if start.status == 303 { return start }
        let login = try browser.loginPage(start)
        let fields = try browser.authorizeAtApple(login, cancel: cancel)
        return try browser.post("/apple_redirect", form: fields)
    }

    /// The query of a redirect to the client.
    static func parameters(_ response: RawHTTPResponse) -> FormFields {
        let location = response.header("Location") ?? ""
        return FormFields(urlEncoded: String(location.split(separator: "?", maxSplits: 1).last ?? ""))
    }

    func code(client: String = publicClient, redirectURI: String = appRedirect) throws -> String {
        let parameters = Self.parameters(try signIn(authorizePath(client: client, redirectURI: redirectURI)))
        guard let code = parameters["code"] else { throw TestFailure("no code in the redirect") }
        return code
    }

    func token(_ form: [(String, String)], basic: (String, String)? = nil) throws -> (status: Int, body: JSONValue, raw: RawHTTPResponse) {
        var headers = [("Content-Type", "application/x-www-form-urlencoded")]
        if let (user, password) = basic {
            headers.append(("Authorization", "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()))
        }
        let response = try harness.request(method: "POST", path: ProviderEndpoints.token,
                                                 headers: headers, body: FormFields(form).urlEncoded)
        return (response.status, (try? JSONValue.parse(response.body)) ?? .null, response)
    }

    func redeem(_ code: String, client: String = publicClient, redirectURI: String = appRedirect,
                verifier: String? = nil, extra: [(String, String)] = []) throws -> (status: Int, body: JSONValue, raw: RawHTTPResponse) {
        var form = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI), ("client_id", client)]
        if let verifier = verifier ?? Optional(self.verifier) { form.append(("code_verifier", verifier)) }
        return try token(form + extra)
    }

    /// The claims of a JWT, after checking its RS256 signature with the key the published JWKS names by its kid.
    func verifiedClaims(_ token: String) throws -> [String: JSONValue] {
        let jwks = try JSONValue.parse(try harness.request(path: ProviderEndpoints.jwks).body)
        let jws = try CompactJWS(parsing: token)
        try jws.requireAlgorithm(in: [.RS256])
        guard let jwk = jwks["keys"]?.arrayValue?.first(where: { $0["kid"]?.stringValue == jws.keyID }) else {
            throw TestFailure("kid \(jws.keyID ?? "none") is not published")
        }
        guard try RSAPublicKey(jwk: jwk).verifyRS256(signature: jws.signature, message: jws.signingInput) else {
            throw TestFailure("signature does not verify with the published key")
        }
        return try jws.claims()
    }
}

@Suite("OpenID provider, end to end", .serialized)
struct OpenIDProviderFlowTests {
    @Test("discovery, authorize, Apple, code, token with PKCE, ID token by the JWKS, userinfo, refresh, rotation")
    func wholeFlow() throws {
        let party = try RelyingParty()
        let discovery = try JSONValue.parse(try party.harness.request(path: ProviderEndpoints.discovery).body)
        #expect(discovery["issuer"]?.stringValue == party.issuer)
        #expect(discovery["authorization_endpoint"]?.stringValue == party.issuer + "/oauth/authorize")

        let redirect = try party.signIn(party.authorizePath())
        #expect(redirect.status == 303)
        #expect(redirect.header("Location")?.hasPrefix(RelyingParty.appRedirect + "?") == true)
        let parameters = RelyingParty.parameters(redirect)
        #expect(parameters["state"] == "client-state-1")
        #expect(parameters["iss"] == party.issuer)
        let code = try #require(parameters["code"])

        let tokens = try party.redeem(code)
        #expect(tokens.status == 200)
        #expect(tokens.raw.header("Cache-Control") == "no-store")
        #expect(tokens.body["token_type"] == "Bearer" && tokens.body["scope"] == "openid email name")
        let idToken = try #require(tokens.body["id_token"]?.stringValue)
        let access = try #require(tokens.body["access_token"]?.stringValue)
        let claims = try party.verifiedClaims(idToken)
        #expect(claims["iss"]?.stringValue == party.issuer)
        #expect(claims["aud"]?.stringValue == RelyingParty.publicClient)
        #expect(claims["nonce"] == "client-nonce-1")
        #expect(claims["apple_sub"] == "001234.simulated.ada")
        #expect(claims["email"] == "ada@example.com" && claims["name"] == "Ada Lovelace")
        #expect(claims["at_hash"]?.stringValue == ProviderTokens.atHash(access))
        let memberID = try #require(claims["sub"]?.stringValue)
        #expect(Int64(memberID) != nil && claims["auth_time"] != nil)
        let accessClaims = try party.verifiedClaims(access)
        #expect(accessClaims["client_id"] == "android-app" && accessClaims["sub"]?.stringValue == memberID)
        let header = try #require(Base64URL.decode(access.split(separator: ".")[0]))
        #expect(String(decoding: header, as: UTF8.self).contains("\"typ\":\"at+jwt\""))

        let userinfo = try party.harness.api(ProviderEndpoints.userinfo, method: "GET", bearer: access)
        #expect(userinfo.status == 200)
        #expect(userinfo.body["sub"]?.stringValue == memberID && userinfo.body["email"] == "ada@example.com")

        let firstRefresh = try #require(tokens.body["refresh_token"]?.stringValue)
        let refreshed = try party.token([("grant_type", "refresh_token"), ("refresh_token", firstRefresh),
                                         ("client_id", RelyingParty.publicClient)])
        #expect(refreshed.status == 200)
        let secondRefresh = try #require(refreshed.body["refresh_token"]?.stringValue)
        #expect(secondRefresh != firstRefresh)
        let refreshedClaims = try party.verifiedClaims(try #require(refreshed.body["id_token"]?.stringValue))
        #expect(refreshedClaims["sub"]?.stringValue == memberID)

        // The rotated token presented again: refused, and the whole family (with its session) is gone.
        let replay = try party.token([("grant_type", "refresh_token"), ("refresh_token", firstRefresh),
                                      ("client_id", RelyingParty.publicClient)])
        #expect(replay.status == 400 && replay.body["error"] == "invalid_grant")
        #expect(party.harness.app.metrics.value("bridge_refresh_reuse_total") == 1)
        let afterReplay = try party.token([("grant_type", "refresh_token"), ("refresh_token", secondRefresh),
                                           ("client_id", RelyingParty.publicClient)])
        #expect(afterReplay.body["error"] == "invalid_grant")
        #expect(try party.harness.api(ProviderEndpoints.userinfo, method: "GET", bearer: access).status == 401)
    }

    @Test("an unknown client or an unregistered redirect URI gets an error page, never a redirect")
    func refusedBeforeRedirect() throws {
        let party = try RelyingParty()
        let wrongRedirect = try party.browser.get(party.authorizePath(redirectURI: "https://evil.example.com/cb"))
        #expect(wrongRedirect.status == 400 && wrongRedirect.header("Location") == nil)
        #expect(wrongRedirect.text.contains("has not registered"))
        let unknown = try party.browser.get(party.authorizePath(client: "nobody"))
        #expect(unknown.status == 400 && unknown.header("Location") == nil)
        #expect(try party.harness.app.store.read { try $0.countUsers() } == 0)
    }

    @Test("a control character or an impossible port in the redirect URI, or a repeated client_id or redirect_uri, gets an error page",
          arguments: ["a NUL after the registered URI", "http://127.0.0.1:0/callback", "http://127.0.0.1:99999/callback",
                      "repeated client_id", "repeated redirect_uri"])
    func strictRedirectURI(case name: String) throws {
        let party = try RelyingParty()
        let path = switch name {
        case "repeated client_id": party.authorizePath(extra: [("client_id", RelyingParty.confidentialClient)])
        case "repeated redirect_uri": party.authorizePath(extra: [("redirect_uri", "http://127.0.0.1:5000/callback")])
        case "a NUL after the registered URI": party.authorizePath(redirectURI: RelyingParty.appRedirect + "\u{0}")
        default: party.authorizePath(redirectURI: name)
        }
        let refused = try party.browser.get(path)
        #expect(refused.status == 400 && refused.header("Location") == nil, "\(refused.status) \(refused.header("Location") ?? "")")
        #expect(refused.text.contains(name.hasPrefix("repeated") ? "more than once" : "has not registered"))
    }

    @Test("a repeated parameter at the token and revocation endpoints is invalid_request, and spends nothing",
          arguments: ["grant_type", "client_id", "code"])
    func repeatedAtTokenEndpoint(name: String) throws {
        let party = try RelyingParty()
        let code = try party.code()
        var form = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", RelyingParty.appRedirect),
                    ("client_id", RelyingParty.publicClient), ("code_verifier", party.verifier)]
        form.append((name, form.first { $0.0 == name }!.1))
        let refused = try party.token(form)
        #expect(refused.status == 400 && refused.body["error"] == "invalid_request")
        #expect(refused.body["error_description"]?.stringValue == "the parameter \(name) is repeated")
        #expect(try party.redeem(code).status == 200)
        let revoke = try party.harness.request(method: "POST", path: ProviderEndpoints.revocation,
                                               headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                               body: FormFields([("token", "x"), ("token", "y"),
                                                                 ("client_id", RelyingParty.publicClient)]).urlEncoded)
        #expect(revoke.status == 400)
        // A parameter the endpoint does not define is ignored, repeated or not (RFC 6749 §3.1).
        let unknownTwice = try party.redeem(try party.code(), extra: [("x-trace", "1"), ("x-trace", "2")])
        #expect(unknownTwice.status == 200)
    }

    @Test("any other repeated parameter goes back to the client as invalid_request")
    func repeatedParameterToRedirect() throws {
        let party = try RelyingParty()
        let refused = try party.browser.get(party.authorizePath(extra: [("scope", "openid")]))
        #expect(refused.status == 303 && RelyingParty.parameters(refused)["error"] == "invalid_request")
        #expect(RelyingParty.parameters(refused)["error_description"] == "the parameter scope is repeated")
    }

    @Test("after the redirect URI is known, errors go back to it: plain PKCE, no PKCE, a cancel at Apple")
    func refusedToRedirect() throws {
        let party = try RelyingParty()
        let plain = try party.browser.get(party.authorizePath(method: "plain"))
        #expect(plain.status == 303 && RelyingParty.parameters(plain)["error"] == "invalid_request")
        #expect(RelyingParty.parameters(plain)["state"] == "client-state-1")
        let noPKCE = try party.browser.get(party.authorizePath(pkce: false))
        #expect(RelyingParty.parameters(noPKCE)["error"] == "invalid_request")
        let cancelled = try party.signIn(party.authorizePath(), cancel: true)
        #expect(cancelled.status == 303)
        #expect(cancelled.header("Location")?.hasPrefix(RelyingParty.appRedirect) == true)
        #expect(RelyingParty.parameters(cancelled)["error"] == "access_denied")
    }

    @Test("the loopback redirect URI may use any port (RFC 8252)")
    func loopbackPort() throws {
        let party = try RelyingParty()
        let redirect = try party.signIn(party.authorizePath(redirectURI: "http://127.0.0.1:53124/callback"))
        #expect(redirect.header("Location")?.hasPrefix("http://127.0.0.1:53124/callback?") == true)
        let code = try #require(RelyingParty.parameters(redirect)["code"])
        #expect(try party.redeem(code, redirectURI: "http://127.0.0.1:53124/callback").status == 200)
    }

    @Test("token endpoint refusals: missing or wrong verifier, replay (revoking the first grant), another client, expiry, redirect_uri")
    func tokenRefusals() throws {
        let party = try RelyingParty()
        let missing = try party.token([("grant_type", "authorization_code"), ("code", try party.code()),
                                       ("redirect_uri", RelyingParty.appRedirect), ("client_id", RelyingParty.publicClient)])
        #expect(missing.status == 400 && missing.body["error"] == "invalid_grant")
        #expect(missing.raw.header("Cache-Control") == "no-store")
        let burnt = try party.code()
        let wrong = try party.redeem(burnt, verifier: SecureRandom.base64URLToken(byteCount: 32))
        #expect(wrong.body["error"] == "invalid_grant" && wrong.body["error_description"] == "code_verifier does not match")
        // Spent by the refused attempt: presented again, it is refused without claiming it gave tokens.
        let burntAgain = try party.redeem(burnt)
        #expect(burntAgain.body["error_description"] == "the code was already presented and refused; it gave no tokens")
        let mismatched = try party.redeem(try party.code(), redirectURI: "http://127.0.0.1/callback")
        #expect(mismatched.body["error"] == "invalid_grant")

        let code = try party.code()
        let first = try party.redeem(code)
        #expect(first.status == 200)
        let second = try party.redeem(code)
        #expect(second.body["error"] == "invalid_grant")
        #expect(second.body["error_description"] == "the code was already used; the tokens it gave are revoked")
        #expect(party.harness.app.metrics.value("bridge_oidc_code_replays_total") == 2)
        let revoked = try party.token([("grant_type", "refresh_token"), ("client_id", RelyingParty.publicClient),
                                       ("refresh_token", first.body["refresh_token"]?.stringValue ?? "")])
        #expect(revoked.body["error"] == "invalid_grant")
        let revokedAccess = try party.harness.api(ProviderEndpoints.userinfo, method: "GET",
                                                  bearer: first.body["access_token"]?.stringValue)
        #expect(revokedAccess.status == 401)

        let otherClient = try party.token([("grant_type", "authorization_code"), ("code", try party.code()),
                                           ("redirect_uri", RelyingParty.appRedirect), ("code_verifier", party.verifier)],
                                          basic: (RelyingParty.confidentialClient, RelyingParty.proxySecret))
        #expect(otherClient.body["error"] == "invalid_grant")

        let late = try party.code()
        party.harness.clock.advance(by: 61)
        #expect(try party.redeem(late).body["error"] == "invalid_grant")

        let unknown = try party.token([("grant_type", "authorization_code"), ("code", "x"), ("redirect_uri", RelyingParty.appRedirect),
                                       ("client_id", "nobody"), ("code_verifier", party.verifier)])
        #expect(unknown.status == 401 && unknown.body["error"] == "invalid_client")
        let grantType = try party.token([("grant_type", "password"), ("client_id", RelyingParty.publicClient)])
        #expect(grantType.body["error"] == "unsupported_grant_type")
    }

    @Test("another client presenting a confidential client's used code is refused, and the rightful client keeps its tokens")
    func anotherClientsUsedCode() throws {
        let party = try RelyingParty()
        let code = try party.code(client: RelyingParty.confidentialClient, redirectURI: RelyingParty.proxyRedirect)
        let form = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", RelyingParty.proxyRedirect),
                    ("code_verifier", party.verifier)]
        let rightful = try party.token(form, basic: (RelyingParty.confidentialClient, RelyingParty.proxySecret))
        #expect(rightful.status == 200)
        // A public client has no secret to prove: it names itself and presents the code it saw.
        let stranger = try party.token(form + [("client_id", RelyingParty.publicClient)])
        #expect(stranger.status == 400 && stranger.body["error"] == "invalid_grant")
        #expect(stranger.body["error_description"] == "the code was issued to another client")
        #expect(party.harness.app.metrics.value("bridge_oidc_code_replays_total") == 0)
        let userinfo = try party.harness.api(ProviderEndpoints.userinfo, method: "GET",
                                             bearer: rightful.body["access_token"]?.stringValue)
        #expect(userinfo.status == 200)
        let refreshed = try party.token([("grant_type", "refresh_token"),
                                         ("refresh_token", rightful.body["refresh_token"]?.stringValue ?? "")],
                                        basic: (RelyingParty.confidentialClient, RelyingParty.proxySecret))
        #expect(refreshed.status == 200)
    }

    @Test("another client presenting an unused code does not spend it: the rightful client still redeems it")
    func anotherClientsUnusedCode() throws {
        let party = try RelyingParty()
        let code = try party.code()
        let stranger = try party.token([("grant_type", "authorization_code"), ("code", code), ("redirect_uri", RelyingParty.appRedirect),
                                         ("code_verifier", party.verifier)],
                                        basic: (RelyingParty.confidentialClient, RelyingParty.proxySecret))
        #expect(stranger.body["error"] == "invalid_grant" && stranger.body["error_description"] == "the code was issued to another client")
        #expect(try party.redeem(code).status == 200)
    }

    @Test("a refresh may narrow the scope; asking for more is invalid_scope and leaves the refresh token good (RFC 6749 §6)")
    func refreshScope() throws {
        let party = try RelyingParty()
        let code = try #require(RelyingParty.parameters(try party.signIn(party.authorizePath(scope: "openid email")))["code"])
        let tokens = try party.redeem(code)
        #expect(tokens.status == 200 && tokens.body["scope"] == "openid email")
        let refresh = try #require(tokens.body["refresh_token"]?.stringValue)
        func refreshing(_ token: String, scope: String) throws -> (status: Int, body: JSONValue, raw: RawHTTPResponse) {
            try party.token([("grant_type", "refresh_token"), ("refresh_token", token), ("client_id", RelyingParty.publicClient),
                             ("scope", scope)])
        }
        let wider = try refreshing(refresh, scope: "openid email name")
        #expect(wider.status == 400 && wider.body["error"] == "invalid_scope")
        let narrower = try refreshing(refresh, scope: "openid")
        #expect(narrower.status == 200 && narrower.body["scope"] == "openid")
        let claims = try party.verifiedClaims(try #require(narrower.body["access_token"]?.stringValue))
        #expect(claims["scope"] == "openid")
        let same = try refreshing(try #require(narrower.body["refresh_token"]?.stringValue), scope: "email openid")
        #expect(same.status == 200 && same.body["scope"] == "openid email")
    }

    @Test("the token endpoint shares the sign-in rate limit: 429 with Retry-After, as RFC 6749 JSON")
    func rateLimited() throws {
        let party = try RelyingParty(signInRequestsPerMinute: 60)
        var statuses: [Int] = []
        for _ in 0..<15 {
            statuses.append(try party.token([("grant_type", "refresh_token"), ("refresh_token", "x"),
                                             ("client_id", RelyingParty.publicClient)]).status)
        }
        #expect(statuses.prefix(10).allSatisfy { $0 == 400 })
        let limited = try party.token([("grant_type", "refresh_token"), ("client_id", RelyingParty.publicClient)])
        #expect(limited.status == 429 && limited.raw.header("Retry-After") != nil)
        // In the token endpoint's own error shape (RFC 6749 §5.2), like its other refusals.
        #expect(limited.body["error"] == "temporarily_unavailable")
        #expect(limited.body["error_description"]?.stringValue?.isEmpty == false)
        #expect(limited.raw.header("Cache-Control") == "no-store")
    }

    @Test("a confidential client authenticates with client_secret_basic or client_secret_post; a wrong secret is 401")
    func confidentialClient() throws {
        let party = try RelyingParty()
        let client = RelyingParty.confidentialClient
        func code() throws -> String { try party.code(client: client, redirectURI: RelyingParty.proxyRedirect) }
        let base = { (code: String) in [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", RelyingParty.proxyRedirect),
                                        ("code_verifier", party.verifier)] }
        let basic = try party.token(base(try code()), basic: (client, RelyingParty.proxySecret))
        #expect(basic.status == 200)
        let post = try party.token(base(try code()) + [("client_id", client), ("client_secret", RelyingParty.proxySecret)])
        #expect(post.status == 200)
        let wrong = try party.token(base(try code()), basic: (client, "wrong"))
        #expect(wrong.status == 401 && wrong.body["error"] == "invalid_client")
        #expect(wrong.raw.header("WWW-Authenticate")?.hasPrefix("Basic") == true)
        let none = try party.token(base(try code()) + [("client_id", client)])
        #expect(none.status == 401)
    }

    @Test("revocation ends the refresh family; a client's refresh token is refused by the JSON API and stays usable")
    func revocationAndAPI() throws {
        let party = try RelyingParty()
        let tokens = try party.redeem(try party.code())
        let refresh = try #require(tokens.body["refresh_token"]?.stringValue)
        let revoke = try party.harness.request(method: "POST", path: ProviderEndpoints.revocation,
                                               headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                               body: FormFields([("token", refresh), ("client_id", RelyingParty.publicClient)]).urlEncoded)
        #expect(revoke.status == 200)
        let second = try party.redeem(try party.code())
        let secondRefresh = try #require(second.body["refresh_token"]?.stringValue)
        let throughAPI = try party.harness.api("/api/auth/refresh", json: party.harness.json(["refreshToken": .string(secondRefresh)]))
        #expect(throughAPI.status == 401)
        let stillValid = try party.token([("grant_type", "refresh_token"), ("refresh_token", secondRefresh),
                                          ("client_id", RelyingParty.publicClient)])
        #expect(stillValid.status == 200)
        let after = try party.token([("grant_type", "refresh_token"), ("refresh_token", refresh),
                                     ("client_id", RelyingParty.publicClient)])
        #expect(after.body["error"] == "invalid_grant" && after.body["error_description"] == "the refresh token was revoked")
        // Presenting a revoked token is no reuse.
        #expect(party.harness.app.metrics.value("bridge_refresh_reuse_total") == 0)
    }
}

@Suite("OpenID provider across instances", .serialized)
struct OpenIDProviderInstancesTests {
    @Test("an authorization started on one instance is finished by another sharing the database")
    func secondInstanceFinishes() throws {
        let party = try RelyingParty()
        let first = party.harness
        let secret = try #require(first.app.configuration.secretKey)
        let second = try BridgeHarness([
            "BRIDGE_DATABASE": "sqlite:\(first.databasePath)", "BRIDGE_SECRET_KEY": Data(secret).base64EncodedString(),
            "BRIDGE_PUBLIC_URL": first.app.configuration.publicURL, "APPLE_ID_URL": "http://127.0.0.1:\(first.simulatorPort)",
            "BRIDGE_CLIENTS_FILE": party.clientsFile,
        ])
        let login = try party.browser.openLogin(party.authorizePath())
        let fields = try party.browser.authorizeAtApple(login)
        let elsewhere = TestBrowser(second)
        for (name, cookie) in party.browser.cookies { elsewhere.set(name, cookie) }
        let answer = try elsewhere.post("/apple_redirect", form: fields)
        #expect(answer.status == 303)
        let code = try #require(RelyingParty.parameters(answer)["code"])
        let tokens = try party.redeem(code)
        #expect(tokens.status == 200)
        let claims = try party.verifiedClaims(try #require(tokens.body["id_token"]?.stringValue))
        #expect(claims["nonce"] == "client-nonce-1")
    }
}
