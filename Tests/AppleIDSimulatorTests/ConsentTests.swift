import AppleIDSimulator
import Foundation
import HTTPServer
import JOSE
import JSON
import Testing
import TestSupport

extension AppleIDSimulatorTests {
    @Suite("POST /auth/authorize")
    struct Consent {
        @Test("Continue answers an auto-submitting form_post to the redirect_uri")
        func continueAutoPosts() throws {
            let running = try RunningSimulator()
            let response = try running.signIn()
            #expect(response.status == 200)
            let html = response.text
            #expect(html.contains("data-auto-submit"))
            let scripts = HTMLDocument(html).select("//script")
            #expect(scripts.map { $0.attributes["src"] } == ["/auth/simulator.js"])
            #expect(scripts.allSatisfy { $0.text.isEmpty })
            #expect(html.contains(#"<button type="submit" class="primary">Continue</button>"#))
            let policy = try #require(response.header("Content-Security-Policy"))
            #expect(policy.contains("form-action http://127.0.0.1:9;"))
            #expect(policy.contains("script-src 'self'"))

            let fields = HTMLForm(html).fieldsByName
            #expect(HTMLForm(html).action == RunningSimulator.redirectURI)
            #expect(Set(fields.keys) == ["state", "code", "id_token", "user"])
            #expect(fields["state"] == "state-123")
            let user = try JSONValue.parse(try #require(fields["user"]))
            #expect(user == ["name": ["firstName": "Ada", "lastName": "Lovelace"], "email": "ada@example.com"])
        }

        @Test("the id_token verifies against the published JWKS and carries Apple's claims")
        func idTokenVerifies() throws {
            let running = try RunningSimulator()
            let fields = try running.signInFields()
            let code = try #require(fields["code"])
            let token = try #require(fields["id_token"])
            let claims = try running.verifiedClaims(token)
            #expect(try CompactJWS(parsing: token).keyID == running.simulator.currentKeyID)
            #expect(claims["iss"] == "https://appleid.apple.com")
            #expect(claims["aud"] == .string(RunningSimulator.clientID))
            #expect(claims["sub"] == .string(SimulatedUser.ada.sub))
            #expect(claims["nonce"] == "nonce-456")
            #expect(claims["c_hash"] == .string(Base64URL.encode(SHA256.hash(Array(code.utf8)).prefix(16))))
            #expect(claims["email"] == "ada@example.com")
            #expect(claims["email_verified"] == true)
            #expect(claims["is_private_email"] == nil)
            #expect(claims["nonce_supported"] == true)
            #expect(claims["real_user_status"] == 2)
            let issuedAt = try #require(claims["iat"]?.int64Value)
            let expiresAt = try #require(claims["exp"]?.int64Value)
            #expect(abs(Double(issuedAt) - Date().timeIntervalSince1970) < 60)
            #expect(expiresAt - issuedAt == 600)
            #expect(claims["auth_time"]?.int64Value == issuedAt)
        }

        @Test("only the first authorization of a user for a client carries the user JSON")
        func userJSONOnlyFirstTime() throws {
            let running = try RunningSimulator()
            #expect(try running.signInFields()["user"] != nil)
            #expect(try running.signInFields()["user"] == nil)
            #expect(try running.signInFields(user: .grace)["user"] != nil)

            var otherClient = RunningSimulator.standardAuthorizeParameters.filter { $0.0 != "client_id" }
            otherClient.append(("client_id", "com.example.other"))
            #expect(try running.signInFields(otherClient)["user"] != nil)
        }

        @Test("Hide My Email shares the private relay address")
        func hideEmail() throws {
            let running = try RunningSimulator()
            let fields = try running.signInFields(user: .grace, hideEmail: true)
            let claims = try running.verifiedClaims(try #require(fields["id_token"]))
            #expect(claims["email"] == .string(SimulatedUser.grace.privateRelayEmail))
            #expect(SimulatedUser.grace.privateRelayEmail.hasSuffix("@privaterelay.appleid.com"))
            #expect(claims["is_private_email"] == true)
            let user = try JSONValue.parse(try #require(fields["user"]))
            #expect(user["email"] == .string(SimulatedUser.grace.privateRelayEmail))
        }

        @Test("Cancel posts user_cancelled_authorize with the state and nothing else")
        func cancel() throws {
            let running = try RunningSimulator()
            let fields = try running.signInFields(action: "cancel")
            #expect(fields == ["state": "state-123", "error": "user_cancelled_authorize"])
        }

        @Test("without scopes the code can come back in the query")
        func queryResponseMode() throws {
            let running = try RunningSimulator()
            let parameters = [("client_id", "com.example.web"), ("redirect_uri", "http://127.0.0.1:9/cb?from=apple"),
                              ("response_type", "code"), ("state", "s1")]
            let page = try running.get(RunningSimulator.authorizePath(parameters))
            #expect(page.status == 200)
            #expect(!page.text.contains("Hide My Email"))
            let response = try running.post("/auth/authorize", form: HTMLForm(page.text).hiddenFields
                + [("user", SimulatedUser.alan.sub), ("action", "continue")])
            #expect(response.status == 302)
            let location = try #require(response.header("Location"))
            #expect(location.hasPrefix("http://127.0.0.1:9/cb?from=apple&state=s1&code=c"))
        }

        @Test("tampered hidden fields are validated again")
        func revalidatesPostedFields() throws {
            let running = try RunningSimulator()
            let unknownUser = try running.post("/auth/authorize", form: RunningSimulator.standardAuthorizeParameters
                + [("user", "001234.nobody"), ("action", "continue")])
            #expect(unknownUser.status == 400)
            let badRedirect = try running.post("/auth/authorize", form: [("client_id", "x"), ("redirect_uri", "nowhere"),
                                                                         ("response_type", "code")])
            #expect(badRedirect.status == 400)
        }

        @Test("a sign-in goes only to a registered Return URL: another is refused before the consent page, and on its post")
        func onlyRegisteredReturnURLs() throws {
            let running = try RunningSimulator(returnURLs: .only([RunningSimulator.redirectURI]))
            #expect(try running.signIn().status == 200)
            for other in ["http://127.0.0.1:9/apple_redirect/", "http://127.0.0.1:10/apple_redirect", "https://evil.example/cb",
                          "http://127.0.0.1:9/apple_redirect?x=1"] {
                var parameters = RunningSimulator.standardAuthorizeParameters.filter { $0.0 != "redirect_uri" }
                parameters.append(("redirect_uri", other))
                let page = try running.get(RunningSimulator.authorizePath(parameters))
                #expect(page.status == 400 && page.text.contains("Invalid web redirect url"), "\(other)")
                let posted = try running.post("/auth/authorize", form: parameters + [("user", SimulatedUser.ada.sub), ("action", "continue")])
                #expect(posted.status == 400 && !posted.text.contains("id_token"), "\(other)")
            }
        }

        @Test("by default only URLs on a loopback host are Return URLs, written as such")
        func loopbackByDefault() {
            #expect(ReturnURLs.loopback.allows("http://127.0.0.1:8080/apple_redirect"))
            #expect(ReturnURLs.loopback.allows("http://[::1]:8080/apple_redirect"))
            #expect(ReturnURLs.loopback.allows("http://localhost/cb"))
            #expect(!ReturnURLs.loopback.allows("https://app.example.com/apple_redirect"))
            #expect(!ReturnURLs.loopback.allows("http://127.0.0.%31/apple_redirect"))
            #expect(!ReturnURLs.loopback.allows("http://127.0.0.1.example.com/cb"))
        }

        @Test("the auto-submit script is served by the simulator")
        func servesScript() throws {
            let running = try RunningSimulator()
            let script = try running.get("/auth/simulator.js")
            #expect(script.status == 200)
            #expect(script.header("Content-Type")?.hasPrefix("text/javascript") == true)
            #expect(script.text.contains("form[data-auto-submit]"))
            let stylesheet = try running.get("/auth/simulator.css")
            #expect(stylesheet.status == 200)
            #expect(stylesheet.header("Content-Type")?.hasPrefix("text/css") == true)
        }
    }
}
