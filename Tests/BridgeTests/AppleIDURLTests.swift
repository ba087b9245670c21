import Bridge
import Foundation
import HTTPServer
import JOSE
import Testing
import TestSupport

/// `serve` with a local stand-in for Apple over http.
@Suite("APPLE_ID_URL over http", .serialized)
struct AppleIDURLTests {
    @Test("serve accepts http on loopback (a local stand-in for Apple)",
          arguments: ["http://127.0.0.1:9", "http://localhost:9", "http://[::1]:9", "http://127.1.2.3"])
    func loopbackAccepted(url: String) {
        #expect(configurationProblem(["APPLE_ID_URL": url]) == nil)
    }

    @Test("serve refuses http anywhere else, naming the key",
          arguments: ["http://appleid.example", "http://127.0.0.1.example.com", "http://10.0.0.1", "http://localhost.example"])
    func otherRefused(url: String) {
        #expect(configurationProblem(["APPLE_ID_URL": url])?.key == "APPLE_ID_URL")
    }
}
