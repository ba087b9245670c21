import Bridge
import Foundation
import HTTPServer
import JOSE
import Testing
import TestSupport

/// `/metrics` behind BRIDGE_METRICS_TOKEN.
@Suite("BRIDGE_METRICS_TOKEN", .serialized)
struct MetricsTokenTests {
    static let token = "metrics-scraper-secret-0123456789"

    @Test("with the token set, /metrics requires it as a Bearer token")
    func required() throws {
        let harness = try BridgeHarness(["BRIDGE_METRICS_TOKEN": Self.token])
        let missing = try harness.request(path: "/metrics")
        #expect(missing.status == 401)
        #expect(missing.header("WWW-Authenticate") == "Bearer")
        #expect(!missing.text.contains("bridge_"))
        let wrong = try harness.request(path: "/metrics",
                                              headers: [("Authorization", "Bearer \(Self.token)x")])
        #expect(wrong.status == 401)
        #expect(wrong.header("WWW-Authenticate") == "Bearer error=\"invalid_token\"")
        let right = try harness.request(path: "/metrics",
                                              headers: [("Authorization", "Bearer \(Self.token)")])
        #expect(right.status == 200)
        #expect(right.text.contains("bridge_jwks_fetches_total"))
        #expect(try harness.request(path: "/healthz").status == 200)
    }

    @Test("without it /metrics stays open (keep it off the public proxy)")
    func openWithoutToken() throws {
        let harness = try BridgeHarness()
        #expect(try harness.request(path: "/metrics").status == 200)
    }

    @Test("a token too short to be a secret stops start-up naming the key")
    func tooShort() {
        #expect(configurationProblem(["BRIDGE_METRICS_TOKEN": "abc"])?.key == "BRIDGE_METRICS_TOKEN")
        #expect(configurationProblem(["BRIDGE_METRICS_TOKEN": "has spaces in it but is long"])?.key == "BRIDGE_METRICS_TOKEN")
    }
}
