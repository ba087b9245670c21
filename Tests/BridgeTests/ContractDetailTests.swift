import Foundation
import HTTPServer
import JOSE
import Testing
import TestSupport

/// What docs/openapi.yaml and RFC 6750 promise, checked over real HTTP.
@Suite("API contract details", .serialized)
struct ContractDetailTests {
    @Test("a blank `user` string is trimmed to nothing, not taken for a claimed user id")
    func blankUserString() throws {
        let harness = try BridgeHarness()
        let token = try harness.token(audience: BridgeHarness.bundleID, nonce: nil)
        let result = try harness.api("/api/auth/apple", json: harness.json(["idToken": .string(token), "user": "   "]))
        #expect(result.status == 200, "\(result.body)")
    }

    @Test("405 on /healthz and /metrics names the allowed methods", arguments: ["/healthz", "/metrics"])
    func methodNotAllowed(path: String) throws {
        let harness = try BridgeHarness()
        let response = try harness.request(method: "POST", path: path)
        #expect(response.status == 405)
        #expect(response.header("Allow") == "GET, HEAD")
    }

    @Test("a missing access token gets `WWW-Authenticate: Bearer`; a rejected one adds error=\"invalid_token\"")
    func bearerChallenge() throws {
        let harness = try BridgeHarness()
        let missing = try harness.api("/api/me", method: "GET")
        #expect(missing.status == 401)
        #expect(missing.raw.header("WWW-Authenticate") == "Bearer")
        let rejected = try harness.api("/api/me", method: "GET", bearer: "not-a-token")
        #expect(rejected.status == 401)
        #expect(rejected.raw.header("WWW-Authenticate") == "Bearer error=\"invalid_token\"")
        #expect(rejected.body["error"]?.stringValue == "unauthorized")
        let logout = try harness.api("/api/auth/logout", bearer: "eyJ.forged.token")
        #expect(logout.raw.header("WWW-Authenticate") == "Bearer error=\"invalid_token\"")
    }

    @Test("deviceId is measured in code points, as the schema's maxLength is")
    func deviceIDCodePoints() throws {
        let harness = try BridgeHarness()
        // 101 "é" written as e + combining acute: 101 characters but 202 code points.
        let combining = String(repeating: "e\u{301}", count: 101)
        let long = try harness.api("/api/auth/apple", json: harness.json([
            "idToken": .string(try harness.token(audience: BridgeHarness.bundleID, nonce: nil)), "deviceId": .string(combining),
        ]))
        #expect(long.status == 400)
        #expect(long.body["error"]?.stringValue == "invalid_device_id")
        let fits = try harness.api("/api/auth/apple", json: harness.json([
            "idToken": .string(try harness.token(audience: BridgeHarness.bundleID, nonce: nil)),
            "deviceId": .string(String(repeating: "e\u{301}", count: 100)),
        ]))
        #expect(fits.status == 200)
    }
}
