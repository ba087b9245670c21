import Bridge
import Foundation
@testable import Storage
import Synchronization
import Testing
import TestSupport

/// The real server on PostgreSQL while the database is stopped and started again under HTTP load, on the second
/// test server of `scripts/with-postgres` that only fault tests use.
@Suite("The server through a database outage", .serialized)
struct DatabaseOutageTests {
    static func required(_ variable: String) throws -> String {
        let environment = ProcessInfo.processInfo.environment
        if let value = environment[variable], !value.isEmpty { return value }
        let reason = "\(variable) is not set: run the tests with scripts/test"
        if !(environment["CI"] ?? "").isEmpty || environment["BRIDGE_TEST_REQUIRE_POSTGRES"] == "1" {
            throw TestFailure(reason)
        }
        Issue.record(Comment(rawValue: "not run: " + reason), severity: .warning)
        try Test.cancel(Comment(rawValue: reason))
    }

    /// The fault server's control script: stop, start, or running (start unless it runs). (posix_spawn and
    /// waitpid: `Process.waitUntilExit` can miss the exit of a script that starts a daemon.)
    static func faultServer(_ action: String) throws {
        let script = try required("BRIDGE_TEST_POSTGRES_FAULT_CTL")
        var arguments: [UnsafeMutablePointer<CChar>?] = [strdup(script), strdup(action), nil]
        defer { arguments.forEach { free($0) } }
        var quiet = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&quiet)
        defer { posix_spawn_file_actions_destroy(&quiet) }
        posix_spawn_file_actions_addopen(&quiet, 1, "/dev/null", O_WRONLY, 0)
        var pid: pid_t = 0
        guard posix_spawn(&pid, script, &quiet, nil, &arguments, environ) == 0 else { throw TestFailure("cannot run \(script)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        guard status == 0 else { throw TestFailure("the fault server did not \(action) (wait status \(status))") }
    }

    /// Starts the fault server and returns once it accepts connections. On a very busy machine `pg_ctl start` may
    /// give up waiting while the server is still coming up, so readiness is what counts.
    /// A start that failed outright (the port briefly held by another socket) is tried again every 5 s.
    static func startAndWait(_ admin: PostgresURL) throws {
        var started = Result { try faultServer("start") }
        for attempt in 1...120 {
            if (try? PostgresConnection(conninfo: admin.connectionString, defaults: ["connect_timeout": "2"])) != nil { return }
            Thread.sleep(forTimeInterval: 0.5)
            if attempt % 10 == 0, case .failure = started { started = Result { try faultServer("start") } }
        }
        try started.get()
        throw TestFailure("the fault server did not come back within 60 s")
    }

    /// One request of the load: a page that writes, an API call that writes, a page that reads; each from its own
    /// forwarded address so the rate limit does not interfere.
    static func request(port: Int, number: Int) throws -> RawHTTPResponse {
        let client = [("X-Forwarded-For", "10.\(number % 250).\(number / 250 % 250).1")]
        switch number % 3 {
        case 0: return try RawHTTPClient.request(port: port, path: "/login", headers: client)
        case 1: return try RawHTTPClient.request(port: port, method: "POST", path: "/api/auth/nonce", headers: client)
        default: return try RawHTTPClient.request(port: port, path: "/session", headers: client)
        }
    }

    @Test("stopped and started under load: only 200, 303 and 503 with Retry-After, no slow answer, and recovery within seconds")
    func outageUnderLoad() throws {
        // The store's fault tests stop and start this server too: one at a time.
        try withExclusiveFileLock(try Self.required("BRIDGE_TEST_POSTGRES_FAULT_CTL") + ".lock") { try outageUnderLoadLocked() }
    }

    private func outageUnderLoadLocked() throws {
        let admin = try PostgresURL(try Self.required("BRIDGE_TEST_POSTGRES_FAULT_URL"))
        let name = "bridge_outage_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try PostgresConnection(conninfo: admin.connectionString, defaults: [:]).execute("CREATE DATABASE \(name)")
        defer { try? Self.faultServer("running") }
        let harness = try BridgeHarness(["BRIDGE_DATABASE": try admin.withDatabase(name).connectionString,
                                         "BRIDGE_DATABASE_POOL_SIZE": "4"], listening: true)
        let port = harness.port
        let running = Atomic<Bool>(true)
        let counter = Atomic<Int>(0)
        let seen = Mutex<[String]>([])  // "status retry-after seconds-since-start"
        let start = Date()
        let load = BackgroundLoad(threads: 4) { _ in
            while running.load(ordering: .relaxed) {
                let number = counter.add(1, ordering: .relaxed).newValue
                let sent = Date()
                let outcome: String
                do {
                    let response = try Self.request(port: port, number: number)
                    outcome = "\(response.status) \(response.header("Retry-After") ?? "-")"
                } catch {
                    outcome = "failed -"
                }
                let took = Date().timeIntervalSince(sent)
                let line = "\(outcome) \(Int(took * 1000)) \(sent.timeIntervalSince(start))"
                seen.withLock { $0.append(line) }
            }
        }
        Thread.sleep(forTimeInterval: 1.5)
        try Self.faultServer("stop")
        let stopped = Date().timeIntervalSince(start)
        Thread.sleep(forTimeInterval: 3)
        try Self.startAndWait(admin)
        let restarted = Date().timeIntervalSince(start)
        Thread.sleep(forTimeInterval: 7)
        running.store(false, ordering: .relaxed)
        load.wait()

        let records = seen.withLock { $0 }.map { $0.split(separator: " ").map(String.init) }
        let statuses = Set(records.map { $0[0] })
        #expect(statuses.isSubset(of: ["200", "303", "503"]), "\(statuses)")
        #expect(statuses.contains("503"), "the outage was not seen: \(statuses)")
        let unavailableWithoutRetryAfter = records.filter { $0[0] == "503" && $0[1] == "-" }.count
        #expect(unavailableWithoutRetryAfter == 0)
        let slowest = records.map { Int($0[2]) ?? 0 }.max() ?? 0
        #expect(slowest < 8_000, "slowest answer \(slowest) ms")
        // Recovery: every request sent from 4 s after the database accepts connections again is answered normally.
        let late = records.filter { (Double($0[3]) ?? 0) > restarted + 4 }
        #expect(!late.isEmpty)
        #expect(late.allSatisfy { $0[0] != "503" }, "still unavailable after the restart: \(late.filter { $0[0] == "503" }.count)")
        #expect(records.contains { $0[0] == "503" && (Double($0[3]) ?? 0) >= stopped })
    }
}
