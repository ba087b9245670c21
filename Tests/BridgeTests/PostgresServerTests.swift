import AppleIDSimulator
import Bridge
import Foundation
@testable import Storage
import Testing
import TestSupport

/// The whole server on PostgreSQL (the test server of `scripts/with-postgres`, run by `scripts/test`).
@Suite("The server on PostgreSQL", .serialized)
struct PostgresServerTests {
    /// A database of its own on the test server for `body`, dropped afterwards. Fails when PostgreSQL
    /// is required (CI, scripts/test) and missing; otherwise warns and cancels.
    func withDatabase(_ body: (String) throws -> Void) throws {
        let environment = ProcessInfo.processInfo.environment
        guard let admin = environment["BRIDGE_TEST_POSTGRES_URL"], !admin.isEmpty else {
            let reason = "BRIDGE_TEST_POSTGRES_URL is not set: run the tests with scripts/test"
            if !(environment["CI"] ?? "").isEmpty || environment["BRIDGE_TEST_REQUIRE_POSTGRES"] == "1" {
                throw TestFailure(reason)
            }
            Issue.record(Comment(rawValue: "not run: " + reason), severity: .warning)
            try Test.cancel(Comment(rawValue: reason))
        }
        let connection = try PostgresConnection(conninfo: admin, defaults: [:])
        let name = "bridge_server_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try connection.execute("CREATE DATABASE \(name)")
        defer { try? connection.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
        try body(try PostgresURL(admin).withDatabase(name).connectionString)
    }

    @Test("PostgreSQL on this machine over TLS: a warning at start-up points to its Unix socket; over the socket, none")
    func tlsOnLoopbackWarned() throws {
        let socket = ProcessInfo.processInfo.environment["BRIDGE_TEST_POSTGRES_SOCKET_URL"] ?? ""
        try withDatabase { url in
            // The test server has ssl = on, and the URL names 127.0.0.1 without sslmode: libpq's prefer encrypts.
            let overTCP = CapturedLog()
            let harness = try BridgeHarness(["BRIDGE_DATABASE": url], logger: overTCP.logger)
            #expect(try TestBrowser(harness).signIn().status == 303)
            #expect(overTCP.contains(event: "migrations_applied"))
            #expect(overTCP.contains(event: "database_tls_on_loopback"))
        }
        try withDatabase { url in
            guard !socket.isEmpty else { throw TestFailure("BRIDGE_TEST_POSTGRES_SOCKET_URL is not set: run the tests with scripts/test") }
            let overSocket = CapturedLog()
            let name = try #require(try PostgresURL(url).database)
            let harness = try BridgeHarness(["BRIDGE_DATABASE": try PostgresURL(socket).withDatabase(name).connectionString],
                                            logger: overSocket.logger)
            #expect(try TestBrowser(harness).signIn().status == 303)
            #expect(overSocket.contains(event: "migrations_applied"))
            #expect(!overSocket.contains(event: "database_tls_on_loopback"))
        }
    }

    @Test("a web sign-in and an app's sign-in with refresh rotation, stored in PostgreSQL")
    func signIns() throws {
        try withDatabase { url in
            let harness = try BridgeHarness(["BRIDGE_DATABASE": url, "BRIDGE_DATABASE_POOL_SIZE": "3"])
            #expect(harness.app.store.backendName == "postgres")
            // A PostgreSQL read is a round trip made on the listener thread: four threads per core.
            let cores = ProcessInfo.processInfo.activeProcessorCount
            #expect(harness.server.http.configuration.threadPoolSize == min(256, max(4, 4 * cores)))
            let browser = TestBrowser(harness)
            #expect(try browser.signIn().status == 303)
            #expect(try browser.get("/session").status == 200)

            let token = try harness.token(audience: BridgeHarness.bundleID, subject: "001234.app.user", nonce: nil)
            let signedIn = try harness.api("/api/auth/apple", json: harness.json(["idToken": .string(token)]))
            #expect(signedIn.status == 200)
            let replayed = try harness.api("/api/auth/apple", json: harness.json(["idToken": .string(token)]))
            #expect(replayed.status == 409)
            let original = try #require(signedIn.body["refreshToken"]?.stringValue)
            let rotated = try harness.api("/api/auth/refresh", json: harness.json(["refreshToken": .string(original)]))
            #expect(rotated.status == 200)
            let reused = try harness.api("/api/auth/refresh", json: harness.json(["refreshToken": .string(original)]))
            #expect(reused.status == 401)
            #expect(reused.body["error"]?.stringValue == "refresh_token_reused")
            #expect(try harness.userCount() == 2)
            // What instances cost each other, counted by cause (none raced here).
            let metrics = try harness.request(path: "/metrics").text.split(separator: "\n")
            #expect(metrics.contains("bridge_store_write_retries_total{cause=\"serialization_failure\"} 0"))
            #expect(metrics.contains("bridge_store_write_retries_total{cause=\"deadlock\"} 0"))
            #expect(metrics.contains("bridge_store_lock_timeouts_total 0"))
            // GET /login, the callback and the app's sign-in are READ COMMITTED writes: the group commit's.
            let grouped = { (name: String) in
                metrics.first { $0.hasPrefix(name + " ") }.flatMap { Int($0.split(separator: " ")[1]) } ?? -1
            }
            let (commits, writes) = (grouped("bridge_store_group_commits_total"), grouped("bridge_store_group_committed_writes_total"))
            #expect(writes >= 3 && commits >= 1 && commits <= writes, "\(commits) commits, \(writes) writes")
            #expect(grouped("bridge_store_group_commit_replays_total") == 0)
        }
    }

    @Test("an unreachable PostgreSQL stops start-up with one line naming the key, never the password")
    func unreachableAtStartUp() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("exe-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try RunningProcess(["serve"], environment: [
            "BRIDGE_PORT": "0", "BRIDGE_DATABASE": "postgres://bridge:hunter2@127.0.0.1:1/bridge",
            "BRIDGE_SECRET_KEY": Data(repeating: 7, count: 32).base64EncodedString(),
            "APPLE_SERVICES_ID": "com.example.web", "APPLE_ID_URL": "https://127.0.0.1:9",
        ], directory: directory).wait()
        #expect(result.status != 0)
        #expect(result.errors.contains("configuration error: BRIDGE_DATABASE"), "\(result.errors)")
        #expect(result.errors.contains("database unavailable"), "\(result.errors)")
        #expect(!(result.output + result.errors).contains("hunter2"))
    }
}
