import Foundation
import HTTPServer
import JOSE
import Testing
import TestSupport

/// A small deterministic generator, so a failing input can be reproduced from the seed in the message.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E3779B97F4A7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58476D1CE4E5B9
        z = (z ^ (z >> 27)) &* 0x94D049BB133111EB
        return z ^ (z >> 31)
    }
}

@Suite("Bad input never crashes the server", .serialized)
struct RobustnessTests {
    static let paths = ["/apple_redirect", "/api/auth/apple", "/api/auth/refresh", "/api/auth/nonce", "/api/auth/logout",
                        "/api/me", "/apple/notifications", "/logout", "/account/delete", "/login", "/session"]
    static let contentTypes = ["application/x-www-form-urlencoded", "application/json", "text/plain", "multipart/form-data; boundary=x", ""]

    func garbage(_ random: inout SplitMix64, length: Int) -> [UInt8] {
        let alphabet = Array("{}[]\":,=&%+.-_ abcXYZ019eyJ\\\u{0}\n".utf8) + [0xC3, 0x28, 0xFF, 0xE2, 0x82]
        return (0..<length).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }
    }

    @Test("hundreds of malformed requests: every answer is a 4xx, none a 5xx, and the server keeps serving")
    func malformedRequests() throws {
        let harness = try BridgeHarness(listening: true)
        let browser = TestBrowser(harness)
        let login = try browser.openLogin()
        let seed: UInt64 = 0xA11CE
        var random = SplitMix64(state: seed)
        var unexpected: [String] = []
        for round in 0..<400 {
            let path = Self.paths[Int(random.next() % UInt64(Self.paths.count))]
            let type = Self.contentTypes[Int(random.next() % UInt64(Self.contentTypes.count))]
            var body = garbage(&random, length: Int(random.next() % 600))
            if round % 5 == 0 {  // sometimes shaped like the real thing, with a live state
                body = Array("state=\(login.state)&id_token=\(String(decoding: garbage(&random, length: 80), as: UTF8.self))".utf8)
            }
            var headers: [(String, String)] = type.isEmpty ? [] : [("Content-Type", type)]
            if round % 3 == 0 { headers.append(("Authorization", "Bearer " + Base64URL.encode(garbage(&random, length: 40)))) }
            if round % 4 == 0 { headers.append(("Cookie", "asb_session=\(Base64URL.encode(garbage(&random, length: 20))); asb_bind_x=y")) }
            let method = ["POST", "GET", "DELETE", "PUT"][Int(random.next() % 4)]
            let response = try harness.request(method: method, path: path, headers: headers, body: body)
            if response.status >= 500 || response.status < 200 {
                unexpected.append("round \(round) (seed \(seed)): \(method) \(path) [\(type)] → \(response.status)")
            }
        }
        #expect(unexpected.isEmpty, "\(unexpected.prefix(5).joined(separator: "\n"))")
        #expect(try harness.userCount() == 0)
        #expect(try harness.request(path: "/healthz").status == 200)
    }

    @Test("malformed request lines and headers are refused without taking the server down")
    func malformedWire() throws {
        let harness = try BridgeHarness(listening: true)
        let raws = [
            "GARBAGE\r\n\r\n",
            "GET /login HTTP/9.9\r\nHost: x\r\n\r\n",
            "GET /login HTTP/1.1\r\nHost: x\r\nX-Long: \(String(repeating: "a", count: 70_000))\r\n\r\n",
            "POST /apple_redirect HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
            "POST /apple_redirect HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            "GET /%00%ff%fe HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        ]
        for raw in raws {
            let response = try? RawHTTPClient.exchange(port: harness.port, raw: Array(raw.utf8))
            if let response { #expect(response.status < 500 || response.status == 505, "\(raw.prefix(40)) → \(response.status)") }
        }
        #expect(try harness.request(path: "/healthz").status == 200)
    }
}
