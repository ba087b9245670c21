import AppleIDSimulator
import Foundation
import HTTPServer
import JOSE
import Testing
import TestSupport

@Suite("AppleIDSimulator")
struct AppleIDSimulatorTests {}

extension AppleIDSimulatorTests {
    @Suite("GET /auth/authorize")
    struct AuthorizePage {
        @Test("renders a consent page with the test users, the email choice and both buttons")
        func rendersConsentPage() throws {
            let running = try RunningSimulator()
            let response = try running.get(RunningSimulator.authorizePath())
            #expect(response.status == 200)
            #expect(response.header("Content-Type")?.hasPrefix("text/html") == true)
            let html = response.text
            #expect(html.contains("Simulated Apple ID — development only"))
            for user in SimulatedUser.defaults {
                #expect(html.contains(#"value="\#(user.sub)""#))
                #expect(html.contains(user.fullName))
            }
            #expect(html.contains("Share My Email") && html.contains("Hide My Email"))
            #expect(html.contains(#"value="continue""#) && html.contains(#"value="cancel""#))
            #expect(html.contains(#"name="viewport""#))
            let hidden = HTMLForm(html).fieldsByName
            #expect(hidden["client_id"] == RunningSimulator.clientID)
            #expect(hidden["redirect_uri"] == RunningSimulator.redirectURI)
            #expect(hidden["state"] == "state-123" && hidden["nonce"] == "nonce-456")
            let policy = try #require(response.header("Content-Security-Policy"))
            #expect(policy.contains("script-src 'self'") && policy.contains("form-action 'self'"))
            #expect(HTMLDocument(html).select("//script").isEmpty)
            #expect(HTMLDocument(html).select("//*[@style]").isEmpty)
        }

        @Test("escapes a hostile state everywhere it is echoed")
        func escapesHostileState() throws {
            let running = try RunningSimulator()
            let hostile = #""><script>alert(1)</script>'"#
            var parameters = RunningSimulator.standardAuthorizeParameters
            parameters.removeAll { $0.0 == "state" }
            parameters.append(("state", hostile))
            let response = try running.get(RunningSimulator.authorizePath(parameters))
            #expect(response.status == 200)
            #expect(!response.text.contains("<script>alert"))
            #expect(HTMLDocument(response.text).select("//script").isEmpty)
            #expect(response.text.contains("&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&#39;"))
            #expect(HTMLForm(response.text).fieldsByName["state"] == hostile)

            let fields = try running.signInFields(parameters)
            #expect(fields["state"] == hostile)
        }

        @Test("refuses requests Apple would refuse, with a readable page", arguments: [
            ("client_id", nil, "no client_id"),
            ("redirect_uri", "/apple_redirect", "absolute http or https URL"),
            ("redirect_uri", "javascript:alert(1)", "absolute http or https URL"),
            ("redirect_uri", "http://127.0.0.1/cb#x", "absolute http or https URL"),
            ("response_type", "token", "response_type"),
            ("response_type", nil, "response_type"),
            ("scope", "name email phone", "scope"),
            ("response_mode", "query", "form_post or web_message when the name or email scope"),
            ("response_mode", "post", "response_mode must be"),
        ] as [(String, String?, String)])
        func refusesInvalidRequests(name: String, value: String?, reason: String) throws {
            let running = try RunningSimulator()
            var parameters = RunningSimulator.standardAuthorizeParameters.filter { $0.0 != name }
            if let value { parameters.append((name, value)) }
            let response = try running.get(RunningSimulator.authorizePath(parameters))
            #expect(response.status == 400)
            #expect(response.header("Content-Type")?.hasPrefix("text/html") == true)
            #expect(response.text.contains("This sign-in request is invalid"))
            #expect(response.text.contains(reason))
        }

        @Test("an id_token cannot travel in the query")
        func refusesIDTokenInQuery() throws {
            let running = try RunningSimulator()
            let parameters = [("client_id", "com.example.web"), ("redirect_uri", RunningSimulator.redirectURI),
                              ("response_type", "code id_token"), ("response_mode", "query")]
            let response = try running.get(RunningSimulator.authorizePath(parameters))
            #expect(response.status == 400)
        }
    }
}
