import AppleIDSimulator
import Foundation
import HTTPServer
import JOSE
import JSON
import Testing
import TestSupport

@Suite("Native JSON API", .serialized)
struct NativeAPITests {
    static let bundleID = BridgeHarness.bundleID

    /// An app's identity token: audience is the bundle ID; nonce as the app set it on the request.
    func appToken(_ harness: BridgeHarness, subject: String = "001234.app.user", nonce: String? = nil,
                  code: String? = nil) throws -> String {
        try harness.token(audience: Self.bundleID, subject: subject, nonce: nonce, code: code)
    }

    func signIn(_ harness: BridgeHarness, subject: String = "001234.app.user") throws -> JSONValue {
        let result = try harness.api("/api/auth/apple", json: harness.json(["idToken": .string(try appToken(harness, subject: subject))]))
        #expect(result.status == 200)
        return result.body
    }

    @Suite("Each client's request shape, as that client sends it")
    struct SeedShapes {
        @Test("an iOS app with a Node back end: identityToken, authorizeCode, snsUserId, nulls for the service tokens")
        func iOSWithNodeBackEnd() throws {
            let harness = try BridgeHarness()
            let token = try harness.token(audience: NativeAPITests.bundleID, subject: SimulatedUser.ada.sub, nonce: nil, code: "c0de")
            let body = """
            {"accessToken":null,"refreshToken":null,"identityToken":"\(token)","authorizeCode":"c0de",\
            "snsUserName":"Ada","snsUserEmail":"spoofed@example.com","snsUserId":"\(SimulatedUser.ada.sub)"}
            """
            let result = try harness.api("/api/auth/apple", json: body)
            #expect(result.status == 200)
            #expect(result.body["tokenType"]?.stringValue == "Bearer")
            #expect(result.body["isExistingMember"] == .bool(false))
            #expect(result.body["memberId"]?.doubleValue == 1)
            #expect(result.body["expiresIn"]?.doubleValue == 900)
            let me = try harness.api("/api/me", method: "GET", bearer: result.body["accessToken"]?.stringValue)
            #expect(me.status == 200)
            #expect(me.body["sub"]?.stringValue == SimulatedUser.ada.sub)
            #expect(me.body["email"]?.stringValue == "user@example.com")  // from the token, not snsUserEmail
            #expect(me.body["displayName"]?.stringValue == "Ada")
            #expect(me.body["flow"]?.stringValue == "api")
        }

        @Test("the iOS + Node shape with a snsUserId that is not the token's subject is refused")
        func iOSWithNodeBackEndSubjectMismatch() throws {
            let harness = try BridgeHarness()
            let token = try harness.token(audience: NativeAPITests.bundleID, subject: SimulatedUser.ada.sub, nonce: nil)
            let result = try harness.api("/api/auth/apple", json: "{\"identityToken\":\"\(token)\",\"snsUserId\":\"someone.else\"}")
            #expect(result.status == 401)
            #expect(result.body["error"]?.stringValue == "subject_mismatch")
            #expect(try harness.userCount() == 0)
        }

        @Test("a SwiftUI app: {\"token\": …} with sha256(nonce) inside the token must send the nonce it was made from")
        func swiftUIApp() throws {
            let harness = try BridgeHarness()
            let token = try harness.token(audience: NativeAPITests.bundleID, nonce: SHA256.hexDigest(Array("app-local-nonce".utf8)))
            let withheld = try harness.api("/api/auth/apple", json: "{\"token\":\"\(token)\"}")
            #expect(withheld.status == 401)
            #expect(withheld.body["error"]?.stringValue == "nonce_required")
            let result = try harness.api("/api/auth/apple", json: "{\"token\":\"\(token)\",\"nonce\":\"app-local-nonce\"}")
            #expect(result.status == 200)
            #expect(result.body["accessToken"]?.stringValue?.isEmpty == false)
            let me = try harness.api("/api/me", method: "GET", bearer: result.body["accessToken"]?.stringValue)
            #expect(me.body["nonceVerified"] == .bool(false))
        }

        @Test("a SwiftUI app that never sends its nonce: the refusal names the nonce field and APPLE_ACCEPT_UNSENT_NONCE; with that setting it signs in once, not nonce-verified")
        func unsentNonce() throws {
            let refusing = try BridgeHarness()
            let token = try refusing.token(audience: NativeAPITests.bundleID, nonce: SHA256.hexDigest(Array("kept-in-the-app".utf8)))
            let refused = try refusing.api("/api/auth/apple", json: "{\"token\":\"\(token)\"}")
            #expect(refused.status == 401 && refused.body["error"]?.stringValue == "nonce_required")
            let message = refused.body["message"]?.stringValue ?? ""
            #expect(message.contains("nonce") && message.contains("APPLE_ACCEPT_UNSENT_NONCE"))
            #expect(try refusing.userCount() == 0)

            let harness = try BridgeHarness(["APPLE_ACCEPT_UNSENT_NONCE": "1"])
            let accepted = try harness.token(audience: NativeAPITests.bundleID, nonce: SHA256.hexDigest(Array("kept-in-the-app".utf8)))
            let result = try harness.api("/api/auth/apple", json: "{\"token\":\"\(accepted)\"}")
            #expect(result.status == 200)
            let me = try harness.api("/api/me", method: "GET", bearer: result.body["accessToken"]?.stringValue)
            #expect(me.body["nonceVerified"] == .bool(false))
            let replay = try harness.api("/api/auth/apple", json: "{\"token\":\"\(accepted)\"}")
            #expect(replay.status == 409 && replay.body["error"]?.stringValue == "token_replayed")
            // A nonce that was sent is still checked, and a web token still needs one this server issued.
            let wrong = try harness.api("/api/auth/apple", json: "{\"token\":\"\(accepted)\",\"nonce\":\"another\"}")
            #expect(wrong.status == 401 && wrong.body["error"]?.stringValue == "nonce_mismatch")
            let web = try harness.token(audience: BridgeHarness.servicesID, subject: "001234.web.user", nonce: "a-web-login-nonce")
            let webResult = try harness.api("/api/auth/apple", json: "{\"token\":\"\(web)\"}")
            #expect(webResult.status == 401 && webResult.body["error"]?.stringValue == "nonce_required")
            #expect(try harness.userCount() == 1)
        }

        @Test("seed 002's path: POST /api/auth/apple-login is POST /api/auth/apple")
        func appleLoginPath() throws {
            let harness = try BridgeHarness()
            let token = try harness.token(audience: NativeAPITests.bundleID, nonce: nil)
            let result = try harness.api("/api/auth/apple-login", json: "{\"idToken\":\"\(token)\"}")
            #expect(result.status == 200 && result.body["isExistingMember"] == .bool(false))
            let missing = try harness.api("/api/auth/apple-login", json: "{}")
            #expect(missing.status == 400 && missing.body["error"]?.stringValue == "missing_id_token")
        }

        @Test("an app with a Spring back end: idToken, authorizationCode, raw nonce, deviceId, timezone, locale, fullName components")
        func springBackEnd() throws {
            let harness = try BridgeHarness()
            let raw = "raw-nonce-from-the-app"
            let token = try harness.token(audience: NativeAPITests.bundleID, nonce: SHA256.hexDigest(Array(raw.utf8)), code: "apple-code")
            let body = """
            {"idToken":"\(token)","authorizationCode":"apple-code","nonce":"\(raw)","deviceId":"device-uuid",\
            "timezone":"Asia/Seoul","locale":"ko-KR","fullName":{"givenName":"Grace","familyName":"Hopper"}}
            """
            let result = try harness.api("/api/auth/apple", json: body)
            #expect(result.status == 200)
            let me = try harness.api("/api/me", method: "GET", bearer: result.body["accessToken"]?.stringValue)
            #expect(me.body["displayName"]?.stringValue == "Grace Hopper")
        }

        @Test("the Spring shape with a nonce the token does not carry is refused")
        func springBackEndWrongNonce() throws {
            let harness = try BridgeHarness()
            let token = try harness.token(audience: NativeAPITests.bundleID, nonce: SHA256.hexDigest(Array("one".utf8)))
            let result = try harness.api("/api/auth/apple", json: "{\"idToken\":\"\(token)\",\"nonce\":\"another\"}")
            #expect(result.status == 401)
            #expect(result.body["error"]?.stringValue == "nonce_mismatch")
        }

        @Test("a Rails site in an app's webview: bodiless POST with state and id_token in the query string")
        func railsWebview() throws {
            let harness = try BridgeHarness()
            let browser = TestBrowser(harness)
            let login = try browser.openLogin()
            let token = try harness.token(audience: NativeAPITests.bundleID, nonce: nil)
            let path = "/apple_redirect?state=\(login.state)&id_token=\(token)"
            let response = try harness.request(method: "POST", path: path,
                                                     headers: browser.cookieHeader(for: "/apple_redirect"))
            browser.remember(response)
            #expect(response.status == 303)
            let page = HTMLDocument(try browser.get("/session").text)
            #expect(page.first("//*[@id='flow']")?.attributes["data-flow"] == "webview-native")
            #expect(page.first("//*[@id='nonce-verified']")?.text.hasPrefix("No") == true)
        }
    }

    @Suite("Webview-native callback nonces")
    struct WebviewNonces {
        @Test("bundle-ID tokens: no nonce, the raw nonce, or its SHA-256 hex are accepted; the session says which",
              arguments: ["absent", "raw", "sha256"])
        func nonceShapes(shape: String) throws {
            let harness = try BridgeHarness()
            let browser = TestBrowser(harness)
            let login = try browser.openLogin()
            let nonce: String? = switch shape {
            case "raw": login.nonce
            case "sha256": SHA256.hexDigest(Array(login.nonce.utf8))
            default: nil
            }
            let token = try harness.token(audience: NativeAPITests.bundleID, nonce: nonce)
            let response = try browser.post("/apple_redirect", form: [("state", login.state), ("id_token", token)])
            #expect(response.status == 303)
            let session = HTMLDocument(try browser.get("/session").text)
            let verified = session.first("//*[@id='nonce-verified']")?.text ?? ""
            #expect(verified.hasPrefix(shape == "absent" ? "No" : "Yes"), "session page: \(session.text)")
            #expect(session.first("//*[@id='flow']")?.attributes["data-flow"] == "webview-native")
        }

        @Test("with only bundle IDs configured, the login page still hands state and nonce to the app")
        func bundleIDsOnly() throws {
            let harness = try BridgeHarness(["APPLE_SERVICES_ID": ""])
            let browser = TestBrowser(harness)
            let login = try browser.openLogin()
            #expect(login.authorizeURL == "#")
            #expect(login.document.text.contains("this button works inside the app"))
            let token = try harness.token(audience: NativeAPITests.bundleID, nonce: SHA256.hexDigest(Array(login.nonce.utf8)))
            let response = try browser.post("/apple_redirect", form: [("state", login.state), ("id_token", token)])
            #expect(response.status == 303)
        }

        @Test("a Services-ID token without a nonce stays refused on the webview path")
        func servicesIDWithoutNonce() throws {
            let harness = try BridgeHarness()
            let browser = TestBrowser(harness)
            let login = try browser.openLogin()
            let token = try harness.token(nonce: nil)
            let path = "/apple_redirect?state=\(login.state)&id_token=\(token)"
            let response = try harness.request(method: "POST", path: path,
                                                     headers: browser.cookieHeader(for: "/apple_redirect"))
            #expect(response.status == 401)
        }
    }

    @Test("a server-issued nonce must match, and works once")
    func serverNonce() throws {
        let harness = try BridgeHarness()
        let issued = try harness.api("/api/auth/nonce")
        #expect(issued.status == 200)
        let nonce = try #require(issued.body["nonce"]?.stringValue)
        #expect(issued.body["expiresIn"]?.doubleValue == 600)

        let mismatched = try harness.token(audience: Self.bundleID, nonce: "other")
        let refused = try harness.api("/api/auth/apple", json: harness.json(["idToken": .string(mismatched), "nonce": .string(nonce)]))
        #expect(refused.status == 401)
        #expect(refused.body["error"]?.stringValue == "nonce_mismatch")

        let hashed = try harness.token(audience: Self.bundleID, nonce: SHA256.hexDigest(Array(nonce.utf8)))
        let accepted = try harness.api("/api/auth/apple", json: harness.json(["idToken": .string(hashed), "nonce": .string(nonce)]))
        #expect(accepted.status == 200)
        let me = try harness.api("/api/me", method: "GET", bearer: accepted.body["accessToken"]?.stringValue)
        #expect(me.body["nonceVerified"] == .bool(true))

        let again = try harness.token(audience: Self.bundleID, subject: "another.user", nonce: nonce)
        let reused = try harness.api("/api/auth/apple", json: harness.json(["idToken": .string(again), "nonce": .string(nonce)]))
        #expect(reused.status == 409)
        #expect(reused.body["error"]?.stringValue == "nonce_already_used")
        #expect(try harness.userCount() == 1)
    }

    @Test("refresh tokens rotate; a rotated one presented later revokes the whole family")
    func refreshRotation() throws {
        let harness = try BridgeHarness()
        let first = try signIn(harness)
        let original = try #require(first["refreshToken"]?.stringValue)
        let rotated = try harness.api("/api/auth/refresh", json: harness.json(["refreshToken": .string(original)]))
        #expect(rotated.status == 200)
        let next = try #require(rotated.body["refreshToken"]?.stringValue)
        #expect(next != original)
        let access = try #require(rotated.body["accessToken"]?.stringValue)
        #expect(try harness.api("/api/me", method: "GET", bearer: access).status == 200)

        let replay = try harness.api("/api/auth/refresh", json: harness.json(["refreshToken": .string(original)]))
        #expect(replay.status == 401)
        #expect(replay.body["error"]?.stringValue == "refresh_token_reused")
        // The family is gone: the newer token and the access token die with it.
        #expect(try harness.api("/api/auth/refresh", json: harness.json(["refreshToken": .string(next)])).status == 401)
        #expect(try harness.api("/api/me", method: "GET", bearer: access).status == 401)
    }

    @Test("concurrent refreshes of one token: exactly one rotates; the others count as reuse and end the family")
    func concurrentRefresh() throws {
        let harness = try BridgeHarness()
        let refresh = try #require(try signIn(harness)["refreshToken"]?.stringValue)
        let body = harness.json(["refreshToken": .string(refresh)])
        let statuses = StatusList()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            statuses.append((try? harness.api("/api/auth/refresh", json: body).status) ?? 0)
        }
        #expect(statuses.values.filter { $0 == 200 }.count == 1)
        #expect(statuses.values.filter { $0 == 401 }.count == 7)
        // A racing copy looks exactly like a stolen one, so the winner's new tokens die with the family.
        #expect(try harness.api("/api/auth/refresh", json: body).body["error"]?.stringValue == "refresh_token_reused")
    }

    @Test("an identity token signs in once, on any path")
    func identityTokenReplay() throws {
        let harness = try BridgeHarness()
        let token = try appToken(harness)
        let body = harness.json(["idToken": .string(token)])
        #expect(try harness.api("/api/auth/apple", json: body).status == 200)
        let replay = try harness.api("/api/auth/apple", json: body)
        #expect(replay.status == 409)
        #expect(replay.body["error"]?.stringValue == "token_replayed")

        // The same token posted to the webview callback is refused too.
        let browser = TestBrowser(harness)
        let login = try browser.openLogin()
        let web = try browser.post("/apple_redirect", form: [("state", login.state), ("id_token", token)])
        #expect(web.status == 409)
        #expect(web.setCookieHeader("asb_session") == nil)

        // And a web sign-in's token cannot be replayed on the API.
        let webBrowser = TestBrowser(harness)
        let webLogin = try webBrowser.openLogin()
        let fields = try webBrowser.authorizeAtApple(webLogin)
        #expect(try webBrowser.post("/apple_redirect", form: fields).status == 303)
        let apiReplay = try harness.api("/api/auth/apple", json: harness.json(["idToken": .string(fields.value("id_token") ?? "")]))
        // Refused before the replay check: a web token never works on the API without a server nonce.
        #expect(apiReplay.status == 401)
        #expect(apiReplay.body["error"]?.stringValue == "nonce_required")
        #expect(try harness.userCount() == 2)
    }

    @Test("the same Apple user on the web and in the app is one user")
    func oneUserAcrossFlows() throws {
        let harness = try BridgeHarness()
        #expect(try TestBrowser(harness).signIn(user: .ada).status == 303)
        let token = try harness.token(audience: Self.bundleID, subject: SimulatedUser.ada.sub, nonce: nil)
        let result = try harness.api("/api/auth/apple", json: harness.json(["idToken": .string(token)]))
        #expect(result.status == 200)
        #expect(result.body["isExistingMember"] == .bool(true))
        #expect(result.body["memberId"]?.doubleValue == 1)
        #expect(try harness.userCount() == 1)
        let me = try harness.api("/api/me", method: "GET", bearer: result.body["accessToken"]?.stringValue)
        #expect(me.body["displayName"]?.stringValue == "Ada Lovelace")
    }

    @Test("bad requests get a clear JSON error and write nothing")
    func badRequests() throws {
        let harness = try BridgeHarness()
        let cases: [(String?, String, Int, String)] = [
            ("idToken=abc", "application/x-www-form-urlencoded", 415, "unsupported_media_type"),
            ("{\"idToken\": ", "application/json", 400, "malformed_json"),
            ("[1,2]", "application/json", 400, "malformed_json"),
            ("{\"authorizationCode\":\"x\"}", "application/json", 400, "missing_id_token"),
            ("{\"idToken\":\"garbage\"}", "application/json", 401, "malformed_token"),
            ("{\"idToken\":\"\(String(repeating: "a", count: 70_000))\"}", "application/json", 413, "body_too_large"),
        ]
        for (body, type, status, code) in cases {
            let result = try harness.api("/api/auth/apple", json: body, contentType: type)
            #expect(result.status == status, "\(code)")
            #expect(result.body["error"]?.stringValue == code)
            #expect(result.body["message"]?.stringValue?.isEmpty == false)
            #expect(result.raw.header("Content-Type") == "application/json")
        }
        #expect(try harness.userCount() == 0)
        let unknown = try harness.api("/api/nothing", method: "GET")
        #expect(unknown.status == 404)
        #expect(unknown.body["error"]?.stringValue == "not_found")
        let wrongMethod = try harness.api("/api/auth/apple", method: "GET")
        #expect(wrongMethod.status == 405)
    }

    @Test("access tokens: RFC 9068 JWTs other services verify with the JWKS, checked on every call, dead after logout")
    func accessTokens() throws {
        let harness = try BridgeHarness()
        let tokens = try signIn(harness)
        let access = try #require(tokens["accessToken"]?.stringValue)
        let header = try #require(Base64URL.decode(access.split(separator: ".")[0]))
        #expect(String(decoding: header, as: UTF8.self).contains("\"typ\":\"at+jwt\""))
        let jwks = try JSONValue.parse(try harness.request(path: "/oauth/jwks").body)
        let jws = try CompactJWS(parsing: access)
        let jwk = try #require(jwks["keys"]?.arrayValue?.first { $0["kid"]?.stringValue == jws.keyID })
        #expect(try RSAPublicKey(jwk: jwk).verifyRS256(signature: jws.signature, message: jws.signingInput))
        #expect(try jws.claims()["client_id"] == "api")

        #expect(try harness.api("/api/me", method: "GET").status == 401)
        #expect(try harness.api("/api/me", method: "GET", bearer: try appToken(harness)).status == 401)
        var tampered = Array(access)
        tampered[tampered.count - 3] = tampered[tampered.count - 3] == "A" ? "B" : "A"
        #expect(try harness.api("/api/me", method: "GET", bearer: String(tampered)).status == 401)
        let fresh = try signIn(harness, subject: "second.user")
        let freshAccess = try #require(fresh["accessToken"]?.stringValue)
        #expect(try harness.api("/api/auth/logout", bearer: freshAccess).status == 204)
        #expect(try harness.api("/api/me", method: "GET", bearer: freshAccess).status == 401)
        let refresh = try harness.api("/api/auth/refresh", json: harness.json(["refreshToken": fresh["refreshToken"] ?? .null]))
        #expect(refresh.status == 401)

        #expect(try harness.api("/api/me", method: "GET", bearer: access).status == 200)
        harness.clock.advance(by: 901)
        #expect(try harness.api("/api/me", method: "GET", bearer: access).status == 401)
    }

    @Test("too many requests from one address get 429 with Retry-After")
    func rateLimit() throws {
        let harness = try BridgeHarness(signInRequestsPerMinute: 60)
        var statuses: [Int] = []
        for _ in 0..<15 { statuses.append(try harness.api("/api/auth/nonce").status) }
        #expect(statuses.prefix(10).allSatisfy { $0 == 200 })
        #expect(statuses.last == 429)
        let limited = try harness.api("/api/auth/nonce")
        #expect(limited.body["error"]?.stringValue == "rate_limited")
        #expect(limited.raw.header("Retry-After") != nil)
        // Behind a proxy on this host, each client has its own bucket (the address the proxy appended).
        let other = try harness.request(method: "POST", path: "/api/auth/nonce",
                                              headers: [("X-Forwarded-For", "198.51.100.7, 203.0.113.9")])
        #expect(other.status == 200)
        // The login page writes a row too, so it shares the limit.
        let page = try harness.request(path: "/login")
        #expect(page.status == 429)
        #expect(page.header("Retry-After") != nil)
        #expect(HTMLDocument(page.text).first("//h1")?.text.contains("Too many sign-in attempts") == true)
    }

    @Test("a web (Services ID) token on the API needs a nonce this server issued")
    func servicesIDTokenOnAPI() throws {
        let harness = try BridgeHarness()
        let leaked = try harness.token(audience: BridgeHarness.servicesID, nonce: "a-web-login-nonce")
        let refused = try harness.api("/api/auth/apple", json: harness.json(["idToken": .string(leaked)]))
        #expect(refused.status == 401)
        #expect(refused.body["error"]?.stringValue == "nonce_required")
        let ownNonce = try harness.api("/api/auth/apple", json: harness.json(["idToken": .string(leaked), "nonce": "a-web-login-nonce"]))
        #expect(ownNonce.status == 401)
        #expect(try harness.userCount() == 0)

        let nonce = try #require(try harness.api("/api/auth/nonce").body["nonce"]?.stringValue)
        let token = try harness.token(audience: BridgeHarness.servicesID, nonce: nonce)
        #expect(try harness.api("/api/auth/apple", json: harness.json(["idToken": .string(token), "nonce": .string(nonce)])).status == 200)
    }

    @Test("a server nonce stays refused after it expired and was cleaned up")
    func expiredNonceAfterCleanup() throws {
        let harness = try BridgeHarness()
        let nonce = try #require(try harness.api("/api/auth/nonce").body["nonce"]?.stringValue)
        harness.clock.advance(by: 601)
        let removed = try harness.app.store.write { try $0.deleteExpired(now: Date().addingTimeInterval(601)) }
        #expect(removed >= 1)
        let token = try harness.token(audience: Self.bundleID, nonce: nonce) { $0.issuedAt = Date().addingTimeInterval(601) }
        let result = try harness.api("/api/auth/apple", json: harness.json(["idToken": .string(token), "nonce": .string(nonce)]))
        #expect(result.status == 401)
        #expect(result.body["error"]?.stringValue == "nonce_expired")
    }
}
