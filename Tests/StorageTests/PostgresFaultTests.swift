import Foundation
import Synchronization
import Testing
import TestSupport
@testable import Storage

/// A PostgreSQL server stopped and restarted under a store, on the second test server of
/// `scripts/with-postgres` that no other test uses.
@Suite("PostgreSQL faults", .serialized) struct PostgresFaultTests {
    /// Bound on any call during an outage: the default connect timeout plus slack.
    static let callBound: TimeInterval = Double(PostgresStore.defaultConnectTimeoutSeconds) + 1

    /// Runs the fault server's control script: stop, start, restart, or running (start unless it runs).
    /// (posix_spawn and waitpid: Foundation's `Process.waitUntilExit` can miss the exit of a script that starts a
    /// daemon.)
    func server(_ action: String) throws {
        let script = try TestPostgres.required("BRIDGE_TEST_POSTGRES_FAULT_CTL")
        var arguments: [UnsafeMutablePointer<CChar>?] = [strdup(script), strdup(action), nil]
        defer { arguments.forEach { free($0) } }
        var quiet = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&quiet)
        defer { posix_spawn_file_actions_destroy(&quiet) }
        posix_spawn_file_actions_addopen(&quiet, 1, "/dev/null", O_WRONLY, 0)
        var pid: pid_t = 0
        guard posix_spawn(&pid, script, &quiet, nil, &arguments, environ) == 0 else {
            throw TestPostgres.Missing(description: "cannot run \(script)")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        guard status == 0 else {
            throw TestPostgres.Missing(description: "the fault server did not \(action) (wait status \(status))")
        }
    }

    /// A migrated store on a fresh database of the fault server; the server is running again afterwards.
    func withFaultStore(poolSize: Int, _ body: (PostgresStore) throws -> Void) throws {
        // Other suites stop and start this server too (the server's outage test): one at a time.
        try withExclusiveFileLock(try TestPostgres.required("BRIDGE_TEST_POSTGRES_FAULT_CTL") + ".lock") {
            try withFaultStoreUnlocked(poolSize: poolSize, body)
        }
    }

    private func withFaultStoreUnlocked(poolSize: Int, _ body: (PostgresStore) throws -> Void) throws {
        let admin = try PostgresURL(try TestPostgres.required("BRIDGE_TEST_POSTGRES_FAULT_URL"))
        let name = "bridge_fault_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try PostgresConnection(conninfo: admin.connectionString, defaults: [:]).execute("CREATE DATABASE \(name)")
        defer { try? server("running") }
        let store = try PostgresStore(url: try admin.withDatabase(name), poolSize: poolSize)
        _ = try store.migrate()
        try body(store)
    }

    /// Times `body`, returning what it threw (nil on success) and how long it took.
    func timed(_ body: () throws -> Void) -> (error: (any Error)?, seconds: TimeInterval) {
        let start = Date()
        do {
            try body()
            return (nil, Date().timeIntervalSince(start))
        } catch {
            return (error, Date().timeIntervalSince(start))
        }
    }

    @Test("restarted while idle: the next call works, on new connections, without an error")
    func restartWhileIdle() throws {
        try withFaultStore(poolSize: 3) { store in
            onThreads(3) { thread in _ = try? store.write { try $0.insertLoginAttempt(loginAttempt("warm-\(thread)")) } }
            try server("restart")
            let call = timed { try store.write { try $0.insertLoginAttempt(loginAttempt("after-restart")) } }
            #expect(call.error == nil, "\(String(describing: call.error))")
            let stored = try store.read { try $0.loginAttempt(state: "after-restart") }
            #expect(stored != nil)
        }
    }

    @Test("restarted while idle: a one-statement read works on a new connection, without an error")
    func restartWhileIdleOneStatementRead() throws {
        try withFaultStore(poolSize: 3) { store in
            try store.write { try $0.insertLoginAttempt(loginAttempt("before-restart")) }
            onThreads(3) { _ in _ = try? store.read { try $0.loginAttempt(state: "before-restart") } }
            try server("restart")
            let call = timed { _ = try store.readOneStatement { try $0.loginAttemptWithAuthorization(state: "before-restart") } }
            #expect(call.error == nil, "\(String(describing: call.error))")
            #expect(try store.readOneStatement { try $0.loginAttemptWithAuthorization(state: "before-restart") }?
                .attempt.state == "before-restart")
        }
    }

    @Test("stopped under load: every call fails fast with unavailable; started again, the store recovers by itself")
    func outageUnderLoad() throws {
        try withFaultStore(poolSize: 4) { store in
            let running = Atomic<Bool>(true)
            let outcomes = Collected<String>()
            let slowest = Mutex<TimeInterval>(0)
            let load = BackgroundLoad(threads: 4) { thread in
                var i = 0
                while running.load(ordering: .relaxed) {
                    i += 1
                    let call = timed { try store.write { try $0.insertLoginAttempt(loginAttempt("load-\(thread)-\(i)")) } }
                    slowest.withLock { $0 = max($0, call.seconds) }
                    switch call.error {
                    case nil: outcomes.append("ok")
                    case StoreError.unavailable?: outcomes.append("unavailable")
                    case let other?: outcomes.append("other: \(other)")
                    }
                    Thread.sleep(forTimeInterval: 0.01)
                }
            }
            Thread.sleep(forTimeInterval: 0.5)
            waitUntil { outcomes.all.count >= 8 }
            try server("stop")
            let duringOutage = (0..<5).map { i in timed { _ = try store.read { try $0.loginAttempt(state: "load-0-\(i)") } } }
            waitUntil { outcomes.all.contains { $0 != "ok" } }  // the load has met the outage
            try server("start")
            let backAt = Date()
            var recovered: TimeInterval?
            while recovered == nil && Date().timeIntervalSince(backAt) < 10 {
                if (try? store.write({ try $0.insertLoginAttempt(loginAttempt("recovered")) })) != nil {
                    recovered = Date().timeIntervalSince(backAt)
                } else {
                    Thread.sleep(forTimeInterval: 0.05)
                }
            }
            Thread.sleep(forTimeInterval: 0.3)
            running.store(false, ordering: .relaxed)
            load.wait()

            for call in duringOutage {
                guard case StoreError.unavailable? = call.error else {
                    Issue.record("during the outage: expected unavailable, got \(String(describing: call.error))")
                    continue
                }
                #expect(call.seconds < Self.callBound)
            }
            // Counted without closures: this toolchain can run the wrong one of several same-shaped closures.
            var counts: [String: Int] = [:]
            var others: [String] = []
            for outcome in outcomes.all {
                counts[outcome.hasPrefix("other") ? "other" : outcome, default: 0] += 1
                if outcome.hasPrefix("other") { others.append(outcome) }
            }
            let lastOutcome = outcomes.all.last
            let slowestCall = slowest.withLock { $0 }
            #expect(others.isEmpty, "\(others.prefix(3))")
            #expect(counts["unavailable", default: 0] > 0)
            #expect(lastOutcome == "ok")
            #expect(slowestCall < Self.callBound)
            #expect(recovered != nil && recovered! < 2, "recovered after \(String(describing: recovered)) s")
            print("PostgreSQL outage under load: \(counts["ok", default: 0]) writes ok, "
                  + "\(counts["unavailable", default: 0]) unavailable, slowest call "
                  + String(format: "%.3f s", slowestCall) + ", recovered "
                  + String(format: "%.3f s", recovered ?? -1) + " after the server was back")
        }
    }
}
