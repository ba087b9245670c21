import JSON
import Foundation
import JOSE
import Testing
import TestSupport

@Suite("Refresh token reuse, every time", .serialized)
struct RefreshReuseTombstoneTests {
    func signIn(_ harness: BridgeHarness) throws -> JSONValue {
        let token = try harness.token(audience: BridgeHarness.bundleID, subject: "001234.reuse.user", nonce: nil)
        let result = try harness.api("/api/auth/apple", json: harness.json(["idToken": .string(token)]))
        #expect(result.status == 200)
        return result.body
    }

    @Test("a rotated refresh token presented a second, third and fourth time: 401 refresh_token_reused each time")
    func everyPresentationSaysReused() throws {
        let harness = try BridgeHarness()
        let original = try #require(try signIn(harness)["refreshToken"]?.stringValue)
        let body = harness.json(["refreshToken": .string(original)])
        let rotated = try harness.api("/api/auth/refresh", json: body)
        #expect(rotated.status == 200)
        let successor = try #require(rotated.body["refreshToken"]?.stringValue)

        for presentation in 2...4 {
            let replay = try harness.api("/api/auth/refresh", json: body)
            #expect(replay.status == 401, "presentation \(presentation)")
            #expect(replay.body["error"]?.stringValue == "refresh_token_reused", "presentation \(presentation)")
        }
        // The successor died with its family, and says why.
        let late = try harness.api("/api/auth/refresh", json: harness.json(["refreshToken": .string(successor)]))
        #expect(late.status == 401)
        #expect(late.body["error"]?.stringValue == "refresh_token_reused")
    }

    @Test("a token the server never issued is still invalid_refresh_token")
    func unknownStaysInvalid() throws {
        let harness = try BridgeHarness()
        let unknown = try harness.api("/api/auth/refresh", json: harness.json(["refreshToken": .string("not-a-token")]))
        #expect(unknown.status == 401)
        #expect(unknown.body["error"]?.stringValue == "invalid_refresh_token")
    }
}
