import AppleIDSimulator
import Bridge
import Foundation
import HTTPServer
import JOSE
@testable import Storage
import Synchronization
import Testing
import TestSupport

/// `apple-signin-bridge serve` killed with SIGKILL under load: one of two instances on one PostgreSQL database,
/// and the one instance on a SQLite file, started again on it.
@Suite("An instance killed under load", .serialized)
struct InstanceCrashTests {
    static let servicesID = "com.example.web"

    /// `serve` with its output discarded (a pipe nobody reads would stall it once full).
    static func serve(port: Int, environment: [String: String]) throws -> ChildProcess {
        let process = try ChildProcess(
            executable: try executablePath(), arguments: ["serve", "--resources", packageRoot],
            environment: environment.merging(["PATH": "/usr/bin:/bin", "BRIDGE_PORT": String(port),
                                              "BRIDGE_PUBLIC_URL": "http://127.0.0.1:\(port)"]) { _, new in new },
            standardOutput: .discard, standardError: .discard)
        for _ in 0..<200 where (try? RawHTTPClient.request(port: port, path: "/healthz"))?.status != 200 { usleep(50_000) }
        guard (try? RawHTTPClient.request(port: port, path: "/healthz"))?.status == 200 else {
            process.terminate()
            throw TestFailure("serve on port \(port) did not come up")
        }
        return process
    }

    /// One web sign-in as a browser sends it: `GET /login`, an identity token for its nonce from the stand-in for
    /// Apple, the form_post. Returns the session cookie (`name=value`) of a 303, nil for any other answer.
    static func signIn(port: Int, number: Int, simulator: AppleIDStandIn) throws -> String? {
        let client = [("X-Forwarded-For", "10.9.\(number / 250 % 250).\(number % 250)")]
        let login = try RawHTTPClient.request(port: port, path: "/login", headers: client)
        guard login.status == 200 else { return nil }
        let page = HTMLDocument(login.text).first("//a[@id='apple-signin']")?.attributes ?? [:]
        guard let state = page["data-state"], let nonce = page["data-nonce"],
              let binding = login.headerValues("Set-Cookie").first(where: { $0.hasPrefix("asb_bind_") })?
                  .split(separator: ";").first else { throw TestFailure("no sign-in link or binding cookie") }
        let token = try simulator.mintIdentityToken(IdentityTokenClaims(
            audience: servicesID, subject: "001.crash.\(number)", nonce: nonce, email: "crash\(number)@example.com"))
        let callback = try RawHTTPClient.request(
            port: port, method: "POST", path: "/apple_redirect",
            headers: client + [("Content-Type", "application/x-www-form-urlencoded"), ("Cookie", String(binding)),
                               ("Origin", "https://appleid.apple.com")],
            body: FormFields([("state", state), ("id_token", token)]).urlEncoded)
        guard callback.status == 303 else { return nil }
        return callback.headerValues("Set-Cookie").first { $0.hasPrefix("asb_session=") }?.split(separator: ";").first.map(String.init)
    }

    @Test("SIGKILL the instance on a SQLite file under load: started again on the file, every session it handed out works")
    func killSQLiteInstance() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("crash-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let apple = try RunningSimulator()
        let simulator = apple.simulator
        defer { apple.server.shutdown(quiescing: false) }
        let environment = [
            "BRIDGE_DATABASE": "sqlite:\(directory.path)/bridge.sqlite3",
            "BRIDGE_SECRET_KEY": Data(SecureRandom.bytes(32)).base64EncodedString(),
            "APPLE_SERVICES_ID": Self.servicesID, "APPLE_ID_URL": apple.url,
        ]
        let port = freeLoopbackPort()
        let victim = try Self.serve(port: port, environment: environment)
        let running = Atomic<Bool>(true)
        let counter = Atomic<Int>(0)
        let sessions = Mutex<[String]>([])
        let load = BackgroundLoad(threads: 8) { _ in
            while running.load(ordering: .relaxed) {
                let number = counter.add(1, ordering: .relaxed).newValue
                if let session = try? Self.signIn(port: port, number: number, simulator: simulator) {
                    sessions.withLock { $0.append(session) }
                }
            }
        }
        Thread.sleep(forTimeInterval: 2)
        // Killed while sign-ins are being committed: each session cookie a client received was acknowledged.
        kill(victim.processIdentifier, SIGKILL)
        victim.waitUntilExit()
        running.store(false, ordering: .relaxed)
        load.wait()
        let handedOut = sessions.withLock { $0 }
        #expect(handedOut.count > 200, "only \(handedOut.count) sign-ins before the kill")

        let restarted = try Self.serve(port: port, environment: environment)
        defer { restarted.terminate(); restarted.waitUntilExit() }
        var broken = 0
        for cookie in handedOut {
            let page = try RawHTTPClient.request(port: port, path: "/session", headers: [("Cookie", cookie)])
            if page.status != 200 { broken += 1 }
        }
        #expect(broken == 0, "\(broken) of \(handedOut.count) sessions were lost with the process")
        // The database the killed process left is intact, and signs people in again.
        #expect(try Self.signIn(port: port, number: counter.add(1, ordering: .relaxed).newValue, simulator: simulator) != nil)
        let database = try SQLiteConnection(path: "\(directory.path)/bridge.sqlite3", setup: "PRAGMA query_only = ON;")
        #expect(try database.query("PRAGMA integrity_check") { try $0.text("integrity_check") } == ["ok"])
    }

    @Test("SIGKILL one of two instances under load: the other keeps serving, and every session handed out still works")
    func killOne() throws {
        let admin = try PostgresURL(try DatabaseOutageTests.required("BRIDGE_TEST_POSTGRES_URL"))
        let name = "bridge_crash_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let connection = try PostgresConnection(conninfo: admin.connectionString, defaults: [:])
        try connection.execute("CREATE DATABASE \(name)")
        defer { try? connection.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
        let apple = try RunningSimulator()
        let simulator = apple.simulator
        defer { apple.server.shutdown(quiescing: false) }
        let environment = [
            "BRIDGE_DATABASE": try admin.withDatabase(name).connectionString, "BRIDGE_DATABASE_POOL_SIZE": "4",
            "BRIDGE_SECRET_KEY": Data(SecureRandom.bytes(32)).base64EncodedString(),
            "APPLE_SERVICES_ID": Self.servicesID, "APPLE_ID_URL": apple.url,
        ]
        let ports = [freeLoopbackPort(), freeLoopbackPort()]
        let victim = try Self.serve(port: ports[0], environment: environment)
        let survivor = try Self.serve(port: ports[1], environment: environment)
        defer { survivor.terminate(); survivor.waitUntilExit() }

        let running = Atomic<Bool>(true)
        let counter = Atomic<Int>(0)
        let sessions = Mutex<[String]>([])
        let survivorFailures = Atomic<Int>(0)
        let load = BackgroundLoad(threads: 4) { worker in
            while running.load(ordering: .relaxed) {
                let number = counter.add(1, ordering: .relaxed).newValue
                // Half the workers send to the victim while it lives; a failed request is simply lost, as a
                // browser would retry it. Sign-ins on the survivor must keep working.
                let port = ports[worker % 2]
                do {
                    if let session = try Self.signIn(port: port, number: number, simulator: simulator) {
                        sessions.withLock { $0.append(session) }
                    } else if port == ports[1] {
                        survivorFailures.add(1, ordering: .relaxed)
                    }
                } catch {
                    if port == ports[1] { survivorFailures.add(1, ordering: .relaxed) }
                }
            }
        }
        Thread.sleep(forTimeInterval: 2)
        let beforeKill = sessions.withLock { $0.count }
        kill(victim.processIdentifier, SIGKILL)
        victim.waitUntilExit()
        Thread.sleep(forTimeInterval: 2)
        running.store(false, ordering: .relaxed)
        load.wait()

        let handedOut = sessions.withLock { $0 }
        #expect(beforeKill > 0)
        #expect(handedOut.count > beforeKill, "the survivor served nothing after the kill")
        #expect(survivorFailures.load(ordering: .relaxed) == 0)
        var broken = 0
        for cookie in handedOut {
            let page = try RawHTTPClient.request(port: ports[1], path: "/session", headers: [("Cookie", cookie)])
            if page.status != 200 { broken += 1 }
        }
        #expect(broken == 0, "\(broken) of \(handedOut.count) sessions no longer work")
    }
}
