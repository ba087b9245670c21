import AppleIDSimulator
import Foundation
import HTTPServer
import JOSE
import JSON
import Synchronization
import Testing
import TestSupport

extension AppleIDSimulatorTests {
    @Suite("POST /auth/token")
    struct TokenEndpoint {
        static func exchange(_ running: RunningSimulator, code: String, clientID: String = RunningSimulator.clientID,
                             redirectURI: String? = RunningSimulator.redirectURI,
                             clientSecret: String? = "any-secret") throws -> RawHTTPResponse {
            var form = [("grant_type", "authorization_code"), ("client_id", clientID), ("code", code)]
            if let redirectURI { form.append(("redirect_uri", redirectURI)) }
            if let clientSecret { form.append(("client_secret", clientSecret)) }
            return try running.post("/auth/token", form: form)
        }

        static func error(_ response: RawHTTPResponse) throws -> String? {
            try JSONValue.parse(response.body)["error"]?.stringValue
        }

        @Test("exchanges a code for tokens; the id_token has the same sub and aud and no nonce")
        func exchangesCode() throws {
            let running = try RunningSimulator()
            let fields = try running.signInFields(hideEmail: true)
            let response = try Self.exchange(running, code: try #require(fields["code"]))
            #expect(response.status == 200)
            #expect(response.header("Cache-Control") == "no-store")
            let body = try JSONValue.parse(response.body)
            #expect(body["token_type"] == "Bearer")
            #expect(body["expires_in"] == 3600)
            let accessToken = try #require(body["access_token"]?.stringValue)
            #expect(body["refresh_token"]?.stringValue?.hasPrefix("r") == true)
            let claims = try running.verifiedClaims(try #require(body["id_token"]?.stringValue))
            #expect(claims["sub"] == .string(SimulatedUser.ada.sub))
            #expect(claims["aud"] == .string(RunningSimulator.clientID))
            #expect(claims["nonce"] == nil)
            #expect(claims["email"] == .string(SimulatedUser.ada.privateRelayEmail))
            #expect(claims["is_private_email"] == true)
            #expect(claims["at_hash"] == .string(IdentityTokenClaims.halfHash(accessToken)))
        }

        @Test("a code works once")
        func codeIsSingleUse() throws {
            let running = try RunningSimulator()
            let code = try #require(try running.signInFields()["code"])
            #expect(try Self.exchange(running, code: code).status == 200)
            let second = try Self.exchange(running, code: code)
            #expect(second.status == 400)
            #expect(try Self.error(second) == "invalid_grant")
        }

        @Test("concurrent exchanges of one code: exactly one wins")
        func concurrentExchanges() throws {
            let running = try RunningSimulator()
            let code = try #require(try running.signInFields()["code"])
            let statuses = Mutex<[Int]>([])
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                let status = (try? Self.exchange(running, code: code).status) ?? -1
                statuses.withLock { $0.append(status) }
            }
            #expect(statuses.withLock { $0.sorted() } == [200] + Array(repeating: 400, count: 7))
        }

        @Test("unknown, expired, other-client and other-redirect codes are invalid_grant")
        func invalidGrants() throws {
            let clock = TestClock(frozenAt: Date())
            let running = try RunningSimulator(clock: clock)
            #expect(try Self.error(Self.exchange(running, code: "c-unknown")) == "invalid_grant")

            let otherClient = try #require(try running.signInFields()["code"])
            #expect(try Self.error(Self.exchange(running, code: otherClient, clientID: "com.example.other")) == "invalid_grant")
            // The failed attempt burned the code.
            #expect(try Self.error(Self.exchange(running, code: otherClient)) == "invalid_grant")

            let otherRedirect = try #require(try running.signInFields()["code"])
            #expect(try Self.error(Self.exchange(running, code: otherRedirect, redirectURI: "http://127.0.0.1:9/x")) == "invalid_grant")
            let noRedirect = try #require(try running.signInFields()["code"])
            #expect(try Self.error(Self.exchange(running, code: noRedirect, redirectURI: nil)) == "invalid_grant")

            let expired = try #require(try running.signInFields()["code"])
            clock.advance(by: 301)
            #expect(try Self.error(Self.exchange(running, code: expired)) == "invalid_grant")
        }

        @Test("a missing client_secret is invalid_client")
        func missingSecret() throws {
            let running = try RunningSimulator()
            let code = try #require(try running.signInFields()["code"])
            let response = try Self.exchange(running, code: code, clientSecret: nil)
            #expect(response.status == 400)
            #expect(try Self.error(response) == "invalid_client")
            #expect(try Self.exchange(running, code: code).status == 200, "a refused client does not burn the code")
        }

        @Test("malformed requests are refused with OAuth errors")
        func malformedRequests() throws {
            let running = try RunningSimulator()
            let notForm = try RawHTTPClient.request(port: running.port, method: "POST", path: "/auth/token",
                                                    headers: [("Content-Type", "application/json")], body: "{}")
            #expect(try Self.error(notForm) == "invalid_request")
            let noGrant = try running.post("/auth/token", form: [("client_id", "a"), ("client_secret", "b")])
            #expect(try Self.error(noGrant) == "invalid_request")
            let password = try running.post("/auth/token", form: [("grant_type", "password"), ("client_id", "a"),
                                                                  ("client_secret", "b")])
            #expect(try Self.error(password) == "unsupported_grant_type")
        }

        @Test("a native-app code exchanges without a redirect_uri")
        func nativeCode() throws {
            let running = try RunningSimulator()
            let code = running.simulator.issueAuthorizationCode(clientID: "com.example.app", user: .alan)
            let response = try Self.exchange(running, code: code, clientID: "com.example.app", redirectURI: nil)
            #expect(response.status == 200)
            let claims = try running.verifiedClaims(try #require(JSONValue.parse(response.body)["id_token"]?.stringValue))
            #expect(claims["aud"] == "com.example.app")
            #expect(claims["email"] == .string(SimulatedUser.alan.email))
        }

        @Test("a refresh token gives a new access token and id_token")
        func refresh() throws {
            let running = try RunningSimulator()
            let code = try #require(try running.signInFields()["code"])
            let first = try JSONValue.parse(Self.exchange(running, code: code).body)
            let refreshToken = try #require(first["refresh_token"]?.stringValue)
            let refreshForm = [("grant_type", "refresh_token"), ("client_id", RunningSimulator.clientID),
                               ("client_secret", "s"), ("refresh_token", refreshToken)]
            let response = try running.post("/auth/token", form: refreshForm)
            #expect(response.status == 200)
            let body = try JSONValue.parse(response.body)
            #expect(body["access_token"] != nil && body["access_token"] != first["access_token"])
            #expect(body["refresh_token"] == nil)
            let claims = try running.verifiedClaims(try #require(body["id_token"]?.stringValue))
            #expect(claims["sub"] == .string(SimulatedUser.ada.sub))

            let unknown = try running.post("/auth/token", form: Array(refreshForm.dropLast()) + [("refresh_token", "r-nope")])
            #expect(try Self.error(unknown) == "invalid_grant")
            let accessAsRefresh = try running.post("/auth/token", form: Array(refreshForm.dropLast())
                + [("refresh_token", try #require(body["access_token"]?.stringValue))])
            #expect(try Self.error(accessAsRefresh) == "invalid_grant")
        }
    }
}
