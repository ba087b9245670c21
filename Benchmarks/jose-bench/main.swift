// Measures RS256 identity-token verification on one thread and compares it with
// OpenSSL's own RSA-2048 verify rate (`openssl speed`, which verifies a pre-hashed
// digest with a ready context: the ceiling for any RS256 verifier built on OpenSSL).
//
// Usage: jose-bench [iterations per round] [--no-openssl]   (build with -c release)
// Other processes on the machine make single runs noisy, so each measurement is taken
// in several interleaved rounds and both the best and the median round are reported.
// `openssl speed` divides by the user CPU time it used, not by wall time, so on a busy machine
// only the per-CPU-second figures compare like with like; both are printed.
import Foundation
import JOSE
import JSON

let iterations = CommandLine.arguments.dropFirst().compactMap { Int($0) }.first ?? 20_000
let rounds = 5

let key = try RSAPrivateKey.generate(bits: 2048)
let publicKey = key.publicKey
let now = Int(Date().timeIntervalSince1970)
// The shape of a real Apple identity token (web flow, private relay address).
let claims: JSONValue = [
    "iss": "https://appleid.apple.com",
    "aud": "com.example.bridge.web",
    "exp": .integer(now + 86_400),
    "iat": .integer(now),
    "sub": "001234.5b6f2c1e8a9d4e0f9c3b2a1d7e6f5a4b.1234",
    "nonce": "d1f0a5a3c1e94c1f8b7de2d5a7e3b9c8f1a2b3c4d5e6f708192a3b4c5d6e7f80",
    "c_hash": "pE3lWuHfJfo3yNJL8TvCbA",
    "email": "x7k2m9q4rt@privaterelay.appleid.com",
    "email_verified": "true",
    "is_private_email": "true",
    "auth_time": .integer(now),
    "nonce_supported": true,
    "real_user_status": 2,
]
let keyID = "W6WcOKB"
let token = try JWSSigner.signRS256(claims: claims, key: key, keyID: keyID)
print("token: \(token.utf8.count) bytes, \(rounds) rounds of \(iterations) iterations each")

/// The complete path a request takes: split, allow-list, decode, verify, parse claims.
@inline(never)
func verifyFully(_ token: String) -> Bool {
    do {
        let jws = try CompactJWS(parsing: token)
        try jws.requireAlgorithm(in: [.RS256])
        guard jws.keyID == keyID, publicKey.verifyRS256(signature: jws.signature, message: jws.signingInput) else { return false }
        let claims = try jws.claims()
        return claims["sub"] != nil
    } catch {
        return false
    }
}

let jws = try CompactJWS(parsing: token)
let signature = jws.signature, signingInput = jws.signingInput

/// CPU time this thread has used, in seconds.
func threadCPUSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) * 1e-9
}

struct Measurement {
    let label: String
    let body: () -> Bool
    var rates: [Double] = []
    var cpuRates: [Double] = []

    mutating func runRound() {
        let clock = ContinuousClock()
        let cpuStart = threadCPUSeconds()
        let elapsed = clock.measure {
            for _ in 0..<iterations { precondition(body()) }
        }
        let cpuSeconds = threadCPUSeconds() - cpuStart
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        rates.append(Double(iterations) / seconds)
        cpuRates.append(Double(iterations) / max(cpuSeconds, 1e-9))
    }

    var best: Double { rates.max() ?? 0 }
    var median: Double { rates.sorted()[rates.count / 2] }
    var bestPerCPUSecond: Double { cpuRates.max() ?? 0 }

    func report() {
        let line = "\(label):".padding(toLength: 70, withPad: " ", startingAt: 0)
        print(line + String(format: "best %7.0f/s (%5.2f µs)   median %7.0f/s   per CPU second: best %7.0f/s",
                            best, 1e6 / best, median, bestPerCPUSecond))
    }
}

var measurements = [
    Measurement(label: "full path (parse + alg check + base64 + RS256 verify + claims JSON)") { verifyFully(token) },
    Measurement(label: "verifyRS256 only (SHA-256 + RSA)") { publicKey.verifyRS256(signature: signature, message: signingInput) },
    Measurement(label: "parse + alg check + claims JSON, no RSA") {
        guard let jws = try? CompactJWS(parsing: token), (try? jws.requireAlgorithm(in: [.RS256])) != nil else { return false }
        return (try? jws.claims())?["sub"] != nil
    },
]
for index in measurements.indices { for _ in 0..<(iterations / 10) { _ = measurements[index].body() } }  // warm up
for _ in 0..<rounds {
    for index in measurements.indices { measurements[index].runRound() }
}
for measurement in measurements { measurement.report() }

/// Verify/s from `openssl speed -seconds 3 rsa2048`, e.g. "rsa 2048 bits 0.000258s 0.000016s 3881.0 61225.0".
func openSSLVerifyRate() -> Double? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["openssl", "speed", "-seconds", "3", "rsa2048"]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    do { try process.run() } catch { return nil }
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let text = String(decoding: data, as: UTF8.self)
    guard let line = text.split(separator: "\n").last(where: { $0.hasPrefix("rsa 2048 bits") }),
          let last = line.split(separator: " ").last
    else { return nil }
    return Double(last)
}

if !CommandLine.arguments.contains("--no-openssl") {
    // Two runs, best kept, to match the best-round figures above.
    let runs = (0..<2).compactMap { _ in openSSLVerifyRate() }
    if let openssl = runs.max() {
        let full = measurements[0], raw = measurements[1]
        print("openssl speed -seconds 3 rsa2048:".padding(toLength: 70, withPad: " ", startingAt: 0)
            + String(format: "best %7.0f/s (%5.2f µs)   runs: %@", openssl, 1e6 / openssl, runs.map { String(Int($0)) }.joined(separator: ", ")))
        print(String(format: "full path = %.0f%% of openssl (median round %.0f%%); verifyRS256 only = %.0f%%",
                     100 * full.best / openssl, 100 * full.median / openssl, 100 * raw.best / openssl))
        print(String(format: "per CPU second (as openssl counts): full path = %.0f%% of openssl; verifyRS256 only = %.0f%%",
                     100 * full.bestPerCPUSecond / openssl, 100 * raw.bestPerCPUSecond / openssl))
    } else {
        print("openssl speed: unavailable")
    }
}
