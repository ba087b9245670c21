import Foundation
import JOSE
import JSON
import Testing
@testable import OpenIDProvider

@Suite("OpenID provider rules")
struct OpenIDProviderTests {
    static let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    static let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"  // RFC 7636 appendix B

    static func registry() -> ClientRegistry {
        ClientRegistry([
            OpenIDClient(clientID: "android", name: "Android", redirectURIs: ["com.example.app:/oauth2redirect",
                                                                              "http://127.0.0.1/callback"]),
            OpenIDClient(clientID: "proxy", name: "Proxy", redirectURIs: ["https://proxy.example.com/oauth2/callback"],
                         secretSHA256: SHA256.hash(Array("s3cret".utf8))),
        ])
    }

    @Test("redirect URIs that may be registered", arguments: [
        ("com.example.app:/oauth2redirect", true), ("https://app.example.com/cb", true),
        ("http://127.0.0.1/cb", true), ("http://[::1]:8000/cb", true), ("http://localhost/cb", true),
        ("http://example.com/cb", false), ("javascript:alert(1)", false), ("myapp://cb", false),
        ("https://app.example.com/cb#frag", false), ("https:///nohost", false), ("not a uri", false),
        ("data:text/html,hi", false), ("file:///etc/passwd", false),
        ("http://127.0.0.1:0/cb", false), ("http://127.0.0.1:99999/cb", false), ("http://[::1]:65536/cb", false),
        ("http://127.0.0.1:65535/cb", true), ("https://app.example.com:/cb", true), ("https://app.example.com:x/cb", false),
        ("https://app.example.com/cb%00", false), ("https://app.example.com/cb\u{0}", false),
        ("https://app.example.com/c%7fb", false), ("https://app.example.com/c%C2%A0b", true),
        ("https://app.example.com/\u{212A}allback", false), ("https://app.example.com/caf\u{E9}", false),
        ("https://app.\u{E9}xample.com/cb", false), ("http://127.0.0.%31/cb", false), ("http://%6Cocalhost/cb", false),
    ])
    func registrable(uri: String, allowed: Bool) {
        let problem = RedirectURI.problem(uri)
        #expect((problem == nil) == allowed, "\(uri): \(problem ?? "allowed")")
    }

    @Test("redirect URI matching: exact, except a loopback port", arguments: [
        ("http://127.0.0.1:51234/callback", "http://127.0.0.1/callback", true),
        ("http://127.0.0.1/callback", "http://127.0.0.1/callback", true),
        ("http://127.0.0.1:5/other", "http://127.0.0.1/callback", false),
        ("http://localhost.evil.com:5/callback", "http://127.0.0.1/callback", false),
        ("com.example.app:/oauth2redirect", "com.example.app:/oauth2redirect", true),
        ("com.example.app:/oauth2redirect/", "com.example.app:/oauth2redirect", false),
        ("https://proxy.example.com/oauth2/callback?x=1", "https://proxy.example.com/oauth2/callback", false),
        ("https://proxy.example.com:8443/oauth2/callback", "https://proxy.example.com/oauth2/callback", false),
        ("http://127.0.0.1:0/callback", "http://127.0.0.1/callback", false),
        ("http://127.0.0.1:99999/callback", "http://127.0.0.1/callback", false),
        ("http://127.0.0.1:051234/callback", "http://127.0.0.1/callback", false),
        ("http://127.0.0.1:65535/callback", "http://127.0.0.1/callback", true),
        ("http://127.0.0.1:5000/callback%00", "http://127.0.0.1/callback", false),
        ("com.example.app:/oauth2redirect%00", "com.example.app:/oauth2redirect", false),
        ("com.example.app:/oauth2redirect\u{0}", "com.example.app:/oauth2redirect", false),
        ("https://proxy.example.com/oauth2/callback\u{1F}", "https://proxy.example.com/oauth2/callback", false),
        // Byte for byte: KELVIN SIGN is canonically equivalent to K, and Swift's == would say they are equal.
        ("https://proxy.example.com/oauth2/\u{212A}allback", "https://proxy.example.com/oauth2/Kallback", false),
        ("https://proxy.example.com/oauth2/cafe\u{301}", "https://proxy.example.com/oauth2/caf\u{E9}", false),
        ("http://127.0.0.%31:5000/callback", "http://127.0.0.1/callback", false),
        ("http://%6Cocalhost:5000/callback", "http://localhost/callback", false),
        ("http://127.0.0.1:5000/c%61llback", "http://127.0.0.1/callback", false),
    ])
    func matching(presented: String, registered: String, matches: Bool) {
        #expect(RedirectURI.matches(presented, registered: registered) == matches)
    }

    @Test("PKCE S256: the RFC 7636 example verifies; anything else does not")
    func pkce() {
        #expect(PKCE.challenge(for: Self.verifier) == Self.challenge)
        #expect(PKCE.verify(Self.verifier, against: Self.challenge))
        #expect(!PKCE.verify(Self.verifier + "x", against: Self.challenge))
        #expect(!PKCE.verify("short", against: PKCE.challenge(for: "short")))
        #expect(PKCE.isWellFormedChallenge(Self.challenge))
        #expect(!PKCE.isWellFormedChallenge(Self.verifier + "aa"))
    }

    static func parameters(_ overrides: [String: String?]) -> (String) -> String? {
        var values: [String: String?] = [
            "client_id": "android", "redirect_uri": "com.example.app:/oauth2redirect", "response_type": "code",
            "scope": "openid email", "state": "xyz", "nonce": "n-1", "code_challenge": challenge,
            "code_challenge_method": "S256",
        ]
        values.merge(overrides) { _, new in new }
        return { values[$0] ?? nil }
    }

    @Test("authorization requests: accepted, refused as a page, or refused back to the redirect URI", arguments: [
        ([:], nil),
        (["client_id": "nobody"], "page:unknownClient"),
        (["client_id": nil], "page:unknownClient"),
        (["redirect_uri": "https://evil.example.com/cb"], "page:unregisteredRedirectURI"),
        (["redirect_uri": nil], "page:missingRedirectURI"),
        (["response_type": "token"], "unsupported_response_type"),
        (["scope": "email"], "invalid_scope"),
        (["code_challenge_method": "plain"], "invalid_request"),
        (["code_challenge_method": nil], "invalid_request"),
        (["code_challenge": nil, "code_challenge_method": nil], "invalid_request"),
        (["code_challenge": "too-short"], "invalid_request"),
        (["prompt": "none"], nil),
        (["prompt": "login consent"], nil),
        (["prompt": "none login"], "invalid_request"),
        (["max_age": "300"], nil),
        (["max_age": "-1"], "invalid_request"),
        (["max_age": "soon"], "invalid_request"),
        (["response_mode": "form_post"], nil),
        (["response_mode": "fragment"], "invalid_request"),
    ] as [([String: String?], String?)])
    func authorization(overrides: [String: String?], expected: String?) {
        let outcome: String?
        do {
            let request = try AuthorizationRequest.validate(Self.parameters(overrides), clients: Self.registry())
            outcome = nil
            #expect(request.scopes == ["openid", "email"] && request.state == "xyz" && request.nonce == "n-1")
        } catch let .redirect(error, _, redirectURI, state) {
            outcome = error
            #expect(redirectURI == "com.example.app:/oauth2redirect" && state == "xyz")
        } catch {
            outcome = "page:\(error)"
        }
        #expect(outcome == expected)
    }

    @Test("a repeated parameter is refused: client_id or redirect_uri as a page, any other back to the client",
          arguments: [(["client_id"], "page:repeatedClientOrRedirectURI"), (["redirect_uri"], "page:repeatedClientOrRedirectURI"),
                      (["redirect_uri", "state"], "page:repeatedClientOrRedirectURI"), (["scope"], "invalid_request"),
                      (["response_type"], "invalid_request"), ([], nil), (["utm_source"], nil)])
    func repeatedParameters(names: [String], expected: String?) {
        let outcome: String?
        do {
            _ = try AuthorizationRequest.validate(Self.parameters([:]), repeated: Set(names), clients: Self.registry())
            outcome = nil
        } catch let .redirect(error, description, _, _) {
            outcome = error
            #expect(description == "the parameter \(names[0]) is repeated")
        } catch {
            outcome = "page:\(error)"
        }
        #expect(outcome == expected)
    }

    @Test("a confidential client may leave PKCE out; a public one may not")
    func confidentialWithoutPKCE() throws {
        let parameters = Self.parameters(["client_id": "proxy", "redirect_uri": "https://proxy.example.com/oauth2/callback",
                                          "code_challenge": nil, "code_challenge_method": nil])
        let request = try AuthorizationRequest.validate(parameters, clients: Self.registry())
        #expect(request.codeChallenge == nil && request.client.isConfidential)
    }

    @Test("client files: each malformed one is refused with one line naming the client", arguments: [
        (#"[{"client_id":"a","name":"A","redirect_uris":["javascript:x"]}]"#, #"client "a": redirect URI"#),
        (#"[{"client_id":"a","name":"A","redirect_uris":[]}]"#, #"client "a": redirect_uris"#),
        (#"[{"client_id":"a","redirect_uris":["https://a.example/cb"]}]"#, #"client "a": name"#),
        (#"[{"client_id":"a","name":"A","redirect_uris":["https://a.example/cb"],"client_secret_sha256":"zz"}]"#, #"client "a": client_secret_sha256"#),
        (#"[{"client_id":"a","name":"A","redirect_uris":["https://a.example/cb"],"secret":"x"}]"#, #"client "a": unknown field"#),
        (#"[{"client_id":"a","name":"A","redirect_uris":["https://a.example/cb"]},{"client_id":"a","name":"B","redirect_uris":["https://b.example/cb"]}]"#, #"client "a": client_id is listed twice"#),
        (#"[{"client_id":"a","name":"A","redirect_uris":["https://a.example/cb"],"first_party":"yes"}]"#, #"client "a": first_party must be true or false"#),
        (#"[{"name":"A"}]"#, "client #1: client_id"),
        (#"{"client_id":"a"}"#, "must be a JSON list"),
        ("[", "is not valid JSON"),
    ])
    func malformedClients(json: String, message: String) {
        let description: String
        do {
            _ = try ClientRegistry.parse(Array(json.utf8))
            description = "accepted"
        } catch {
            description = error.description
        }
        #expect(description.hasPrefix(message), "\(description)")
        #expect(!description.contains("\n"))
    }

    @Test("a good client file: public and confidential clients")
    func goodClients() throws {
        let hex = SHA256.hexDigest("s3cret")
        let json = #"[{"client_id":"web","name":"Web","redirect_uris":["https://a.example/cb"],"client_secret_sha256":"\#(hex)"},"# +
            #"{"client_id":"android","name":"Android","redirect_uris":["com.example.app:/cb","http://127.0.0.1/cb"]},"# +
            #"{"client_id":"own","name":"Own app","redirect_uris":["https://app.example.com/open"],"first_party":true},"# +
            #"{"client_id":"own-web","name":"Own site","redirect_uris":["http://127.0.0.1/cb"],"client_secret_sha256":"\#(hex)","first_party":true}]"#
        let registry = try ClientRegistry.parse(Array(json.utf8), reserving: ["api"])
        let web = try #require(registry.client("web"))
        #expect(web.isConfidential && web.secretMatches("s3cret") && !web.secretMatches("s3cret "))
        #expect(!web.isFirstParty)
        #expect(registry.client("android")?.isConfidential == false)
        #expect(registry.client("android")?.isFirstParty == false)
        #expect(registry.client("own")?.isFirstParty == true && registry.client("own-web")?.isFirstParty == true)
    }

    @Test("a client id the server uses itself is refused, in any letter case", arguments: ["api", "API", "Api"])
    func reservedClientID(id: String) {
        let json = #"[{"client_id":"\#(id)","name":"A","redirect_uris":["https://a.example/cb"]}]"#
        #expect(throws: ClientRegistryError("client \"\(id)\": client_id \"\(id)\" is reserved: the server uses it itself")) {
            try ClientRegistry.parse(Array(json.utf8), reserving: ["api"])
        }
    }

    @Test("first_party on a public client whose code could go to another app on the device is refused",
          arguments: [["com.example.app:/cb"], ["http://127.0.0.1/cb"], ["https://a.example/cb", "com.example.app:/cb"]])
    func publicFirstPartyRefused(uris: [String]) {
        let list = uris.map { "\"\($0)\"" }.joined(separator: ",")
        let json = #"[{"client_id":"own","name":"Own","redirect_uris":[\#(list)],"first_party":true}]"#
        var description = "accepted"
        do { _ = try ClientRegistry.parse(Array(json.utf8)) } catch { description = error.description }
        #expect(description.hasPrefix(#"client "own": first_party needs client_secret_sha256 or https redirect URIs only"#),
                "\(description)")
        #expect(!description.contains("\n"))
    }

    @Test("a client is found by its id byte for byte, never by a canonically equal one")
    func clientIDBytes() {
        let registry = ClientRegistry([OpenIDClient(clientID: "Kiosk", name: "Kiosk", redirectURIs: ["https://k.example/cb"])])
        #expect(registry.client("Kiosk") != nil)
        #expect(registry.client("\u{212A}iosk") == nil)
    }

    @Test("discovery lists every endpoint under the issuer, code, S256 and RS256 only")
    func discovery() {
        let document = ProviderEndpoints.discoveryDocument(issuer: "https://login.example.com")
        #expect(document["issuer"]?.stringValue == "https://login.example.com")
        #expect(document["token_endpoint"]?.stringValue == "https://login.example.com/oauth/token")
        #expect(document["jwks_uri"]?.stringValue == "https://login.example.com/oauth/jwks")
        #expect(document["response_types_supported"] == ["code"])
        #expect(document["code_challenge_methods_supported"] == ["S256"])
        #expect(document["id_token_signing_alg_values_supported"] == ["RS256"])
        #expect(document["authorization_response_iss_parameter_supported"] == true)
    }

    @Test("ID and access tokens: signed with the kid, at_hash over the access token, claims by scope")
    func tokens() throws {
        let key = SigningKey(keyID: "k1", privateKey: try RSAPrivateKey.generate())
        let tokens = ProviderTokens(issuer: "https://login.example.com")
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let access = try tokens.accessToken(subject: 42, clientID: "android", scopes: ["openid"], sessionIDHash: "sid",
                                            now: now, lifetime: 900, key: key)
        let subject = TokenSubject(memberID: 42, appleSubject: "001.abc", email: "a@example.com", emailVerified: true,
                                   isPrivateEmail: false, name: "Ada")
        let id = try tokens.idToken(subject: subject, clientID: "android", scopes: ["openid", "email"], nonce: "n",
                                    authTime: now, accessToken: access, now: now, lifetime: 3600, key: key)
        let jws = try CompactJWS(parsing: id)
        #expect(jws.keyID == "k1")
        #expect(key.privateKey.publicKey.verifyRS256(signature: jws.signature, message: jws.signingInput))
        let claims = try jws.claims()
        #expect(claims["at_hash"]?.stringValue == ProviderTokens.atHash(access))
        #expect(claims["sub"] == "42" && claims["aud"] == "android" && claims["nonce"] == "n" && claims["apple_sub"] == "001.abc")
        #expect(claims["email"] == "a@example.com" && claims["name"] == nil)
        let lookup: (String) -> RSAPublicKey? = { $0 == "k1" ? key.privateKey.publicKey : nil }
        let verified = tokens.verifyAccessToken(access, now: now, publicKey: lookup)
        #expect(verified?.memberID == 42 && verified?.clientID == "android")
        let expired = tokens.verifyAccessToken(access, now: now.addingTimeInterval(900), publicKey: lookup)
        #expect(expired == nil)
        // An ID token is never accepted as an access token (typ differs).
        let confused = tokens.verifyAccessToken(id, now: now, publicKey: lookup)
        #expect(confused == nil)
    }
}
