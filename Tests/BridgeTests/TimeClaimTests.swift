import AppleIDSimulator
import Foundation
import JSON
import Testing
import TestSupport

/// A validly signed token whose time claims no store can hold must be refused with a clear 401, and the
/// server must keep answering: an `exp` of 1e19 used to be accepted and then trap when it was stored.
@Suite("Time claims out of range", .serialized)
struct TimeClaimTests {
    @Test("a signed app token with an absurd exp is refused and the server stays up",
          arguments: [("exp", 1e19), ("exp", -1e19), ("iat", 1e19), ("exp", 1.5e10)])
    func absurdTime(claim: String, value: Double) throws {
        let harness = try BridgeHarness()
        let token = try harness.token(audience: BridgeHarness.bundleID, nonce: nil) { $0.extra[claim] = .number(value) }
        let result = try harness.api("/api/auth/apple", json: harness.json(["idToken": .string(token)]))
        #expect(result.status == 401)
        let expected = value == 1.5e10 ? "lifetime_too_long" : "invalid_time_claim"
        #expect(result.body["error"]?.stringValue == expected)
        #expect(try harness.userCount() == 0)
        let health = try harness.request(method: "GET", path: "/healthz")
        #expect(health.status == 200)
    }
}
