import Bridge
import Foundation
import HTTPServer
import JOSE
import Testing
import TestSupport

/// Whose X-Forwarded-For is believed (BRIDGE_TRUSTED_PROXIES), as the rate limiter sees clients.
@Suite("BRIDGE_TRUSTED_PROXIES and the rate limiter", .serialized)
struct TrustedProxyTests {
    /// Calls `/api/auth/nonce` as `forwardedFor` via the loopback peer until refused; how many got through.
    func admitted(_ harness: BridgeHarness, forwardedFor: [String], calls: Int) throws -> Int {
        var admitted = 0
        for index in 0..<calls {
            let address = forwardedFor[index % forwardedFor.count]
            let response = try harness.request(method: "POST", path: "/api/auth/nonce",
                                                     headers: [("X-Forwarded-For", "198.51.100.7, \(address)")])
            if response.status == 200 { admitted += 1 }
        }
        return admitted
    }

    @Test("by default a loopback proxy is trusted: each forwarded client has its own bucket")
    func loopbackTrusted() throws {
        let harness = try BridgeHarness(signInRequestsPerMinute: 6)  // burst 10
        #expect(try admitted(harness, forwardedFor: ["203.0.113.1", "203.0.113.2"], calls: 20) == 20)
        #expect(try admitted(harness, forwardedFor: ["203.0.113.1"], calls: 1) == 0)
    }

    @Test("a peer that is not a trusted proxy cannot pick its rate-limit bucket with X-Forwarded-For")
    func untrustedPeer() throws {
        let harness = try BridgeHarness(["BRIDGE_TRUSTED_PROXIES": "10.0.0.0/8"], signInRequestsPerMinute: 6)
        #expect(try admitted(harness, forwardedFor: (1...20).map { "203.0.113.\($0)" }, calls: 20) == 10)
    }

    @Test("IPv6 clients share one bucket per /64")
    func ipv6PerSlash64() throws {
        let harness = try BridgeHarness(signInRequestsPerMinute: 6)
        let sameNetwork = (1...20).map { "2001:db8:1:2::\(String($0, radix: 16))" }
        #expect(try admitted(harness, forwardedFor: sameNetwork, calls: 20) == 10)
        #expect(try admitted(harness, forwardedFor: ["2001:db8:1:3::1"], calls: 1) == 1)
    }

    @Test("the listener's cap on requests in flight counts an IPv6 client by its /64, as the rate limiter does")
    func inFlightCapPerSlash64() throws {
        var listener = ServerConfiguration()
        listener.perClientRequestLimit = 1
        let harness = try BridgeHarness(listener: listener, listening: true)
        // In flight from its headers on: a form post whose body never comes.
        let held = try RawHTTPClient.connect(port: harness.port)
        defer { close(held) }
        RawHTTPClient.sendAll(held, Array("""
            POST /apple_redirect HTTP/1.1\r\nHost: bridge\r\nX-Forwarded-For: 2001:db8:1:2::1\r\n\
            Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 64\r\n\r\n
            """.utf8))
        let deadline = Date() + 5
        while harness.server.http.inFlightRequests < 1, Date() < deadline { usleep(1_000) }
        let sameNetwork = try harness.request(path: "/healthz",
                                                    headers: [("X-Forwarded-For", "2001:db8:1:2::beef")])
        #expect(sameNetwork.status == 429)
        let otherNetwork = try harness.request(path: "/healthz",
                                                     headers: [("X-Forwarded-For", "2001:db8:1:3::1")])
        #expect(otherNetwork.status == 200)
    }

    @Test("a malformed entry stops start-up naming the key", arguments: ["10.0.0.0/33", "not-an-address", "::1/129", "10.0.0.0/"])
    func malformed(entry: String) {
        #expect(configurationProblem(["BRIDGE_TRUSTED_PROXIES": entry])?.key == "BRIDGE_TRUSTED_PROXIES")
    }
}
