import AppleIDSimulator
import Foundation
import HTTPServer
import JOSE
import JSON
import Testing
import TestSupport

extension AppleIDSimulatorTests {
    @Suite("POST /auth/revoke")
    struct Revoke {
        static func revoke(_ running: RunningSimulator, token: String, clientSecret: String? = "s") throws -> RawHTTPResponse {
            var form = [("client_id", RunningSimulator.clientID), ("token", token), ("token_type_hint", "refresh_token")]
            if let clientSecret { form.append(("client_secret", clientSecret)) }
            return try running.post("/auth/revoke", form: form)
        }

        @Test("revoking a refresh token ends the authorization: tokens stop working, the next sign-in is a first one")
        func revokesKnownToken() throws {
            let running = try RunningSimulator()
            #expect(try running.signInFields()["user"] != nil)
            let code = try #require(try running.signInFields()["code"])
            let tokens = try JSONValue.parse(TokenEndpoint.exchange(running, code: code).body)
            let refreshToken = try #require(tokens["refresh_token"]?.stringValue)

            let response = try Self.revoke(running, token: refreshToken)
            #expect(response.status == 200)
            #expect(response.body.isEmpty)
            #expect(running.simulator.revokedTokens == [refreshToken])

            let refresh = try running.post("/auth/token", form: [
                ("grant_type", "refresh_token"), ("client_id", RunningSimulator.clientID), ("client_secret", "s"),
                ("refresh_token", refreshToken)])
            #expect(try TokenEndpoint.error(refresh) == "invalid_grant")
            #expect(try running.signInFields()["user"] != nil)
        }

        @Test("unknown tokens are answered 200 as well")
        func unknownToken() throws {
            let running = try RunningSimulator()
            let response = try Self.revoke(running, token: "r-never-issued")
            #expect(response.status == 200)
            #expect(running.simulator.revokedTokens == ["r-never-issued"])
        }

        @Test("a missing client_secret is invalid_client and revokes nothing")
        func missingSecret() throws {
            let running = try RunningSimulator()
            let response = try Self.revoke(running, token: "r-x", clientSecret: nil)
            #expect(response.status == 400)
            #expect(try TokenEndpoint.error(response) == "invalid_client")
            #expect(running.simulator.revokedTokens.isEmpty)
        }
    }
}
