// Full web sign-ins per second: POST /apple_redirect on loopback with valid, distinct states and tokens,
// each one verified (RS256 against the cached JWKS), consumed, upserted and given a session in SQLite.
// Printed beside the same process's single-core token verifications per second as a reference.
import AppleID
import AppleIDSimulator
import Bridge
import BridgeSettings
import Foundation
import HTTPServer
import JOSE
import TestSupport

let count = Int(ProcessInfo.processInfo.environment["BENCH_SIGNINS"] ?? "") ?? 3000
let workers = Int(ProcessInfo.processInfo.environment["BENCH_CLIENTS"] ?? "") ?? 16
let root = FileManager.default.currentDirectoryPath
let directory = NSTemporaryDirectory() + "bridge-bench-\(UUID().uuidString)"
try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: directory) }

let simulator = try AppleIDStandIn()
let simulatorHTTP = MicroHTTPDListener(configuration: ServerConfiguration(host: "127.0.0.1", port: 0), responder: simulator, logger: .silent)
try simulatorHTTP.start()
let port = 18_200 + Int.random(in: 0..<500)
let configuration = try BridgeConfiguration(values: [
    "BRIDGE_PORT": String(port), "BRIDGE_PUBLIC_URL": "http://127.0.0.1:\(port)",
    "BRIDGE_DATABASE": "sqlite:\(directory)/bench.sqlite3",
    "BRIDGE_SECRET_KEY": Data(SecureRandom.bytes(32)).base64EncodedString(),
    "APPLE_SERVICES_ID": "com.example.web", "APPLE_ID_URL": "http://127.0.0.1:\(simulatorHTTP.port)",
], mode: .development)
let server = try BridgeServer(configuration: configuration, resourcesDirectory: root, logger: .silent,
                              // One client address prepares every login: the most the store's rate limit takes (a
                              // burst of a million; 10,000,000 a minute asked for more, and every login page was 500).
                              signInRequestsPerMinute: 6_000_000)
try server.start()
_ = server.app.keys.prefetch()

print("Preparing \(count) login attempts and tokens...")
struct Prepared: Sendable { let body: String; let cookie: String }
var prepared: [Prepared] = []
for index in 0..<count {
    let login = try RawHTTPClient.request(port: port, path: "/login")
    let page = HTMLDocument(login.text)
    guard let link = page.first("//a[@id='apple-signin']"), let state = link.attributes["data-state"],
          let nonce = link.attributes["data-nonce"],
          let binding = login.headerValues("Set-Cookie").first(where: { $0.hasPrefix("asb_bind_") }) else {
        fatalError("login page without a link: \(login.status)")
    }
    let token = try simulator.mintIdentityToken(IdentityTokenClaims(audience: "com.example.web", subject: "bench.\(index)",
                                                                     nonce: nonce, email: "bench\(index)@example.com"))
    prepared.append(Prepared(body: FormFields([("state", state), ("id_token", token)]).urlEncoded,
                             cookie: String(binding.split(separator: ";")[0])))
}

/// Hands out the prepared requests to client threads and counts failures.
final class Workload: @unchecked Sendable {
    private let lock = NSLock()
    private let items: [Prepared]
    private var cursor = 0
    private(set) var failures = 0

    init(_ items: [Prepared]) { self.items = items }

    func next() -> Prepared? {
        lock.lock(); defer { lock.unlock() }
        guard cursor < items.count else { return nil }
        cursor += 1
        return items[cursor - 1]
    }

    func fail() { lock.lock(); failures += 1; lock.unlock() }

    nonisolated func run(port: Int, clients: Int) {
        DispatchQueue.concurrentPerform(iterations: clients) { _ in
            while let item = next() {
                let response = try? RawHTTPClient.request(port: port, method: "POST", path: "/apple_redirect",
                    headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Cookie", item.cookie)], body: item.body)
                if response?.status != 303 { fail() }
            }
        }
    }
}

let workload = Workload(prepared)
let started = Date()
workload.run(port: port, clients: workers)
let failures = workload.failures
let elapsed = Date().timeIntervalSince(started)
server.shutdown()
simulatorHTTP.shutdown()

// Reference in the same run: raw verification throughput of one core.
let key = try RSAPrivateKey.generate(bits: 2048)
let message = Array(repeating: UInt8(ascii: "a"), count: 700)
let signature = try key.signRS256(message)
let publicKey = key.publicKey
let verifyStart = Date()
var verified = 0
while Date().timeIntervalSince(verifyStart) < 2 {
    for _ in 0..<200 where publicKey.verifyRS256(signature: signature, message: message) { verified += 1 }
}
let verifyRate = Double(verified) / Date().timeIntervalSince(verifyStart)

print(String(format: "POST /apple_redirect full sign-ins, %d clients, %d sign-ins (%d failed):", workers, count, failures))
print(String(format: "  sign-ins                               %10.0f /s  (%.2f ms each on average per client)",
             Double(count) / elapsed, elapsed * 1000 * Double(workers) / Double(count)))
print(String(format: "  RS256 verifications, one core (ref.)   %10.0f /s", verifyRate))
