import AppleIDSimulator
import Foundation
import HTTPServer
import Testing
import TestSupport

extension AppleIDSimulatorTests {
    /// Chromium checks a page's `form-action` against the redirects that answer its form post too: the pages whose
    /// post the relying party (or the simulator) answers with a redirect name where that redirect may lead.
    @Suite("form-action of the simulator's pages")
    struct FormAction {
        static let destinations = [RunningSimulator.redirectURI: [
            "https://intranet.example.com", "com.example.app:", "http://127.0.0.1:*",
            "https://evil.example; script-src *", "'unsafe-inline'", "*", "https://*.example.com",
        ]]

        static func formAction(_ response: RawHTTPResponse) -> String? {
            response.header("Content-Security-Policy")?.split(separator: ";")
                .map { $0.trimmingCharacters(in: .whitespaces) }.first { $0.hasPrefix("form-action ") }
        }

        @Test("the auto-post page names the redirect URI's origin and where the relying party sends the browser on")
        func autoPostNamesDestinations() throws {
            let running = try RunningSimulator(callbackDestinations: Self.destinations)
            let response = try running.signIn()
            #expect(HTMLForm(response.text).action == RunningSimulator.redirectURI)
            #expect(Self.formAction(response) == "form-action http://127.0.0.1:9 https://intranet.example.com com.example.app: http://127.0.0.1:*")
            #expect(response.header("Content-Security-Policy")?.contains("script-src 'self';") == true)
        }

        @Test("a cancel goes back through the same page and the same policy")
        func cancelNamesDestinations() throws {
            let running = try RunningSimulator(callbackDestinations: Self.destinations)
            let response = try running.signIn(action: "cancel")
            #expect(HTMLForm(response.text).fieldsByName["error"] == "user_cancelled_authorize")
            #expect(Self.formAction(response) == "form-action http://127.0.0.1:9 https://intranet.example.com com.example.app: http://127.0.0.1:*")
        }

        @Test("another redirect URI gets its own origin only")
        func otherRedirectURIGetsItsOriginOnly() throws {
            let running = try RunningSimulator(callbackDestinations: Self.destinations,
                                               returnURLs: .only([RunningSimulator.redirectURI, "https://other.example.com/callback"]))
            var parameters = RunningSimulator.standardAuthorizeParameters.filter { $0.0 != "redirect_uri" }
            parameters.append(("redirect_uri", "https://other.example.com/callback"))
            let response = try running.signIn(parameters)
            #expect(Self.formAction(response) == "form-action https://other.example.com")
        }

        @Test("the consent page posts to the simulator only, unless its answer is a redirect to the redirect URI")
        func consentPage() throws {
            let running = try RunningSimulator(callbackDestinations: Self.destinations)
            let formPost = try running.get(RunningSimulator.authorizePath())
            #expect(Self.formAction(formPost) == "form-action 'self'")

            let query = [("client_id", RunningSimulator.clientID), ("redirect_uri", RunningSimulator.redirectURI),
                         ("response_type", "code"), ("response_mode", "query"), ("state", "state-123")]
            let page = try running.get(RunningSimulator.authorizePath(query))
            #expect(page.status == 200)
            #expect(Self.formAction(page)
                == "form-action 'self' http://127.0.0.1:9 https://intranet.example.com com.example.app: http://127.0.0.1:*")
            let answer = try running.signIn(query)
            #expect(answer.status == 302)
            #expect(answer.header("Location")?.hasPrefix(RunningSimulator.redirectURI + "?") == true)
        }
    }
}
