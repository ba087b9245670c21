import Bridge
import Foundation
import HTTPServer
import JOSE
import Testing
import TestSupport

/// Opt-in CORS for the JSON API (BRIDGE_CORS_ORIGINS).
@Suite("BRIDGE_CORS_ORIGINS", .serialized)
struct CORSTests {
    static let origin = "https://app.example.com"

    func preflight(_ harness: BridgeHarness, _ path: String, origin: String = CORSTests.origin,
                   method: String = "POST") throws -> RawHTTPResponse {
        try harness.request(method: "OPTIONS", path: path, headers: [
            ("Origin", origin), ("Access-Control-Request-Method", method),
            ("Access-Control-Request-Headers", "authorization, content-type"),
        ])
    }

    @Test("a listed origin's preflight on the JSON API is answered 204, without credentials",
          arguments: [("/api/auth/nonce", "POST"), ("/api/auth/apple", "POST"), ("/api/auth/refresh", "POST"),
                      ("/api/auth/logout", "POST"), ("/api/me", "GET"), ("/api/me", "DELETE")])
    func preflightAnswered(path: String, method: String) throws {
        let harness = try BridgeHarness(["BRIDGE_CORS_ORIGINS": "https://other.example, \(Self.origin)"])
        let response = try preflight(harness, path, method: method)
        #expect(response.status == 204)
        #expect(response.header("Access-Control-Allow-Origin") == Self.origin)
        #expect(response.header("Vary")?.contains("Origin") == true)
        #expect(response.header("Access-Control-Allow-Methods")?.contains(method) == true)
        #expect(response.header("Access-Control-Allow-Headers") == "Authorization, Content-Type")
        #expect(response.header("Access-Control-Max-Age") != nil)
        #expect(response.header("Access-Control-Allow-Credentials") == nil)
    }

    @Test("actual API responses name the origin and expose WWW-Authenticate and Retry-After")
    func actualResponses() throws {
        let harness = try BridgeHarness(["BRIDGE_CORS_ORIGINS": Self.origin])
        let nonce = try harness.request(method: "POST", path: "/api/auth/nonce",
                                              headers: [("Origin", Self.origin)])
        #expect(nonce.status == 200)
        #expect(nonce.header("Access-Control-Allow-Origin") == Self.origin)
        #expect(nonce.header("Access-Control-Expose-Headers") == "WWW-Authenticate, Retry-After")
        let me = try harness.request(path: "/api/me", headers: [("Origin", Self.origin)])
        #expect(me.status == 401)
        #expect(me.header("Access-Control-Allow-Origin") == Self.origin)
        #expect(me.header("Access-Control-Allow-Credentials") == nil)
    }

    @Test("an origin not on the list, the HTML routes and Apple's notifications get no CORS headers")
    func notElsewhere() throws {
        let harness = try BridgeHarness(["BRIDGE_CORS_ORIGINS": Self.origin])
        let stranger = try preflight(harness, "/api/auth/apple", origin: "https://evil.example")
        #expect(stranger.header("Access-Control-Allow-Origin") == nil)
        #expect(stranger.status != 204)
        let strangerCall = try harness.request(method: "POST", path: "/api/auth/nonce",
                                                     headers: [("Origin", "https://evil.example")])
        #expect(strangerCall.header("Access-Control-Allow-Origin") == nil)
        for path in ["/apple/notifications", "/apple_redirect", "/logout"] {
            let response = try preflight(harness, path)
            #expect(response.header("Access-Control-Allow-Origin") == nil, "\(path)")
            #expect(response.status == 405, "\(path)")
        }
        let login = try harness.request(path: "/login", headers: [("Origin", Self.origin)])
        #expect(login.header("Access-Control-Allow-Origin") == nil)
    }

    @Test("without the setting there is no CORS at all")
    func offByDefault() throws {
        let harness = try BridgeHarness()
        let response = try preflight(harness, "/api/auth/apple")
        #expect(response.status == 405)
        #expect(response.header("Access-Control-Allow-Origin") == nil)
    }

    @Test("a malformed origin stops start-up naming the key",
          arguments: ["https://app.example.com/", "https://app.example.com/path", "app.example.com", "*",
                      "https://app.example.com?x=1", "https://user@app.example.com"])
    func malformed(origin: String) {
        #expect(configurationProblem(["BRIDGE_CORS_ORIGINS": origin])?.key == "BRIDGE_CORS_ORIGINS")
    }

    @Test("origins with a port, on http loopback, are accepted")
    func wellFormed() {
        #expect(configurationProblem(["BRIDGE_CORS_ORIGINS": "https://app.example.com:8443, http://localhost:3000, capacitor://localhost"]) == nil)
    }
}
