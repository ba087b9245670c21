// Sign-ins per second at the store alone: one web sign-in's writes (consume the login
// attempt, record the identity token, upsert the user, insert the session) through the
// real `Store.write` and `StoreTransaction` methods, from 1, 16 and 64 threads.
//
//   store-bench [--count N] [--threads 1,16,64] [--save FILE] [--baseline FILE]
//
// --save writes the figures to FILE; --baseline prints an earlier saved run beside this one.
import Foundation
import Storage

struct Options {
    var count = 20_000
    var threadCounts = [1, 16, 64]
    var savePath: String?
    var baselinePath: String?

    init(_ arguments: [String]) {
        var rest = arguments[...]
        while let option = rest.popFirst() {
            switch option {
            case "--count": count = Int(rest.popFirst() ?? "") ?? count
            case "--save": savePath = rest.popFirst()
            case "--baseline": baselinePath = rest.popFirst()
            case "--threads": threadCounts = (rest.popFirst() ?? "").split(separator: ",").compactMap { Int($0) }
            default: fatalError("unknown option \(option)")
            }
        }
    }
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
let start = Date(timeIntervalSince1970: 1_750_000_000)

/// A migrated store in a fresh folder, with `count` unconsumed login attempts.
func preparedStore(in directory: String, count: Int) throws -> any Store {
    let store = try StoreFactory.open("sqlite:\(directory)/bench.sqlite3")
    _ = try store.migrate()
    for batch in stride(from: 0, to: count, by: 5_000) {
        try store.write { transaction in
            for index in batch..<min(count, batch + 5_000) {
                try transaction.insertLoginAttempt(LoginAttempt(
                    state: "state-\(index)", nonce: "nonce-\(index)", bindingHash: "binding-\(index)",
                    createdAt: start, expiresAt: start + 3_600))
            }
        }
    }
    return store
}

/// One sign-in; a third of them are returning users.
func signIn(_ index: Int, store: any Store) throws {
    let now = start + 1
    try store.write { transaction in
        guard try transaction.consumeLoginAttempt(state: "state-\(index)", now: now) else {
            fatalError("attempt \(index) not consumed")
        }
        guard try transaction.recordIdentityTokenUse(tokenHash: "token-\(index)", tokenExpiresAt: now + 540, expiresAt: now + 600, now: now) else {
            fatalError("token \(index) replayed")
        }
        let sub = index % 3 == 0 ? "returning-\(index % 1_000)" : "user-\(index)"
        let user = try transaction.upsertAppleUser(
            AppleUserProfile(sub: sub, email: "\(sub)@example.com", emailVerified: true,
                             isPrivateEmail: false, displayName: nil), now: now).user
        try transaction.insertSession(Session(idHash: "session-\(index)", userID: user.id, flow: "web",
                                              nonceVerified: true, createdAt: now, expiresAt: now + 86_400))
    }
}

/// Sign-ins per second with `threads` threads sharing `count` sign-ins.
func measure(threads: Int, count: Int) throws -> Double {
    let directory = NSTemporaryDirectory() + "store-bench-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let store = try preparedStore(in: directory, count: count)
    let next = Counter()
    let gate = DispatchSemaphore(value: 0)
    let finished = DispatchGroup()
    for _ in 0..<threads {
        finished.enter()
        Thread {
            gate.wait()
            while let index = next.take(below: count) {
                do { try signIn(index, store: store) } catch { fatalError("sign-in \(index): \(error)") }
            }
            finished.leave()
        }.start()
    }
    let began = DispatchTime.now()
    for _ in 0..<threads { gate.signal() }
    finished.wait()
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - began.uptimeNanoseconds) / 1e9
    let wal = (try? FileManager.default.attributesOfItem(atPath: "\(directory)/bench.sqlite3-wal")[.size] as? Int) ?? 0
    if ProcessInfo.processInfo.environment["STORE_BENCH_VERBOSE"] != nil {
        print("  (\(threads) threads: WAL \(wal / 1024) KiB at the end)")
    }
    return Double(count) / seconds
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0

    func take(below limit: Int) -> Int? {
        lock.lock()
        defer { lock.unlock() }
        guard value < limit else { return nil }
        value += 1
        return value - 1
    }
}

func savedFigures(_ path: String?) -> [Int: Double] {
    guard let path, let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [:] }
    var figures: [Int: Double] = [:]
    for line in text.split(separator: "\n") {
        let fields = line.split(separator: " ")
        if fields.count == 2, let threads = Int(fields[0]), let rate = Double(fields[1]) { figures[threads] = rate }
    }
    return figures
}

let baseline = savedFigures(options.baselinePath)
var saved = ""
print("Store sign-ins (consume attempt, record token, upsert user, insert session), \(options.count) per run:")
print("threads   " + (baseline.isEmpty ? "" : "   baseline/s") + "    sign-ins/s")
for threads in options.threadCounts {
    let rate = try measure(threads: threads, count: options.count)
    saved += "\(threads) \(rate)\n"
    let before = baseline[threads].map { String(format: "%13.0f", $0) } ?? ""
    print(String(format: "%7d   ", threads) + before + String(format: "%14.0f", rate)
          + (baseline[threads].map { String(format: "   (x%.2f)", rate / $0) } ?? ""))
}
if let path = options.savePath {
    try saved.write(toFile: path, atomically: true, encoding: .utf8)
}
