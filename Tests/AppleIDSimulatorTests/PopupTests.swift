import AppleIDSimulator
import Foundation
import HTTPServer
import JSON
import Testing
import TestSupport

extension AppleIDSimulatorTests {
    /// Apple's JS SDK in popup mode: the authorize page runs in a popup and hands its answer to the page that opened it.
    @Suite("popup mode (response_mode=web_message) and the stand-in SDK")
    struct Popup {
        static let parameters = RunningSimulator.standardAuthorizeParameters.map {
            $0.0 == "response_mode" ? ($0.0, "web_message") : $0
        }

        /// The message the answer page posts to its opener, and the origin it addresses.
        static func webMessage(_ response: RawHTTPResponse) throws -> (message: JSONValue, targetOrigin: String?) {
            let element = try #require(HTMLDocument(response.text).first("//div[@id='web-message']"), "\(response.text)")
            let message = try JSONValue.parse(try #require(element.attributes["data-message"]))
            return (message, element.attributes["data-target-origin"])
        }

        @Test("consent answers with the authorization for the opener, addressed to the redirect URI's origin only")
        func consentPostsToOpener() throws {
            let running = try RunningSimulator()
            let consent = try running.get(RunningSimulator.authorizePath(Self.parameters))
            #expect(consent.status == 200)
            #expect(consent.header("Content-Security-Policy")?.contains("form-action 'self';") == true)
            let answer = try running.signIn(Self.parameters)
            #expect(answer.status == 200)
            #expect(answer.header("Content-Security-Policy")?.contains("form-action 'none';") == true)
            #expect(HTMLDocument(answer.text).first("//form") == nil)
            let (message, targetOrigin) = try Self.webMessage(answer)
            #expect(targetOrigin == "http://127.0.0.1:9")
            #expect(message["method"]?.stringValue == "oauthDone")
            let authorization = try #require(message["data"]?["authorization"])
            #expect(authorization["state"]?.stringValue == "state-123")
            #expect(authorization["code"]?.stringValue?.isEmpty == false)
            let claims = try running.verifiedClaims(try #require(authorization["id_token"]?.stringValue))
            #expect(claims["nonce"]?.stringValue == "nonce-456")
            // Apple's JS hands `user` over as an object, not as the JSON text a form_post carries.
            #expect(message["data"]?["user"]?["name"]?["firstName"]?.stringValue == SimulatedUser.ada.firstName)
        }

        @Test("Cancel in the popup answers user_cancelled_authorize to the opener, with no code")
        func cancel() throws {
            let running = try RunningSimulator()
            let (message, targetOrigin) = try Self.webMessage(try running.signIn(Self.parameters, action: "cancel"))
            #expect(targetOrigin == "http://127.0.0.1:9")
            #expect(message["data"] == .object(["error": "user_cancelled_authorize", "state": "state-123"]))
        }

        @Test("the stand-in for appleid.auth.js is served at Apple's CDN path, for any locale, and nowhere else")
        func standInSDK() throws {
            let running = try RunningSimulator()
            for locale in ["en_US", "ko_KR"] {
                let script = try running.get("/appleauth/static/jsapi/appleid/1/\(locale)/appleid.auth.js")
                #expect(script.status == 200)
                #expect(script.header("Content-Type") == "text/javascript; charset=utf-8")
                #expect(script.text.contains("window.AppleID"))
                #expect(script.text.contains("response_mode") && script.text.contains("web_message"))
                #expect(script.text.contains("popup_closed_by_user"))
            }
            for path in ["/appleauth/static/jsapi/appleid/1/appleid.auth.js", "/appleauth/static/jsapi/appleid/1/../appleid.auth.js",
                         "/appleauth/static/jsapi/appleid/1/en_US/other.js"] {
                #expect(try running.get(path).status == 404, "\(path)")
            }
        }
    }
}
