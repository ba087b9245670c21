import AppleIDSimulator
import Foundation
import HTTPServer
import JOSE
@testable import Storage
import Synchronization
import Testing
import TestSupport

/// `apple-signin-bridge backup --to FILE`: the SQLite database copied while a server signs people in.
@Suite("The backup command", .serialized)
struct BackupCommandTests {
    func temporaryDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("backup-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// The users in a copy, after SQLite's integrity check; the copy is opened alone, as a restore would.
    func checkedUsers(in path: String) throws -> (integrity: [String], users: Int, schema: Int) {
        let copy = try SQLiteConnection(path: path, setup: "PRAGMA query_only = ON;", creating: false)
        let integrity = try copy.query("PRAGMA integrity_check") { try $0.text("integrity_check") ?? "" }
        let users = try copy.query("SELECT count(*) AS n FROM users") { Int(try $0.integer("n") ?? 0) }.first ?? 0
        let schema = try copy.query("SELECT max(version) AS v FROM schema_migrations") { Int(try $0.integer("v") ?? 0) }.first ?? 0
        return (integrity, users, schema)
    }

    @Test("backed up under sign-in load: the copy passes the integrity check and holds the members signed in before it")
    func backupUnderLoad() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let apple = try RunningSimulator()
        let simulator = apple.simulator
        defer { apple.server.shutdown(quiescing: false) }
        let environment = [
            "BRIDGE_DATABASE": "sqlite:\(directory)/bridge.sqlite3",
            "BRIDGE_SECRET_KEY": Data(SecureRandom.bytes(32)).base64EncodedString(),
            "APPLE_SERVICES_ID": InstanceCrashTests.servicesID, "APPLE_ID_URL": apple.url,
        ]
        let port = freeLoopbackPort()
        let server = try InstanceCrashTests.serve(port: port, environment: environment)
        defer { server.terminate(); server.waitUntilExit() }
        let running = Atomic<Bool>(true)
        let counter = Atomic<Int>(0)
        let signedIn = Atomic<Int>(0)
        let load = BackgroundLoad(threads: 4) { _ in
            while running.load(ordering: .relaxed) {
                let number = counter.add(1, ordering: .relaxed).newValue
                if (try? InstanceCrashTests.signIn(port: port, number: number, simulator: simulator)) != nil {
                    signedIn.add(1, ordering: .relaxed)
                }
            }
        }
        Thread.sleep(forTimeInterval: 1)
        let before = signedIn.load(ordering: .relaxed)
        let copyPath = "\(directory)/copy.sqlite3"
        let backup = try RunningProcess(["backup", "--to", copyPath], environment: environment).wait()
        let after = signedIn.load(ordering: .relaxed)
        Thread.sleep(forTimeInterval: 0.5)
        let end = signedIn.load(ordering: .relaxed)
        running.store(false, ordering: .relaxed)
        load.wait()

        #expect(backup.status == 0, "backup: \(backup.errors)")
        #expect(backup.output.contains("integrity ok"))
        #expect(before > 0 && end > after, "the sign-ins did not go on around the backup (\(before), \(after), \(end))")
        let copy = try checkedUsers(in: copyPath)
        #expect(copy.integrity == ["ok"])
        #expect(copy.schema == SchemaVersion.current)
        // Each sign-in here is a new member: the copy holds at least those acknowledged before the backup started.
        #expect(copy.users >= before && copy.users <= counter.load(ordering: .relaxed),
                "\(copy.users) members in the copy; \(before) signed in before the backup, \(after) when it ended")
        #expect(backup.output.contains("\(copy.users) members"))
        // One file, with a rollback journal (header bytes 18 and 19 are 1; 2 is WAL): it opens read-only anywhere.
        let header = try Data(contentsOf: URL(fileURLWithPath: copyPath)).prefix(20)
        #expect(header.count == 20 && header[18] == 1 && header[19] == 1)
        let mode = try FileManager.default.attributesOfItem(atPath: copyPath)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix(".copy") } == [])
    }

    @Test("an existing file is replaced only with --force; a PostgreSQL database, a missing one and a missing folder are refused by name")
    func refusals() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var environment = [
            "BRIDGE_DATABASE": "sqlite:\(directory)/bridge.sqlite3",
            "BRIDGE_SECRET_KEY": Data(SecureRandom.bytes(32)).base64EncodedString(),
            "APPLE_SERVICES_ID": InstanceCrashTests.servicesID,
        ]
        let missing = try RunningProcess(["backup", "--to", "\(directory)/copy.sqlite3"], environment: environment).wait()
        #expect(missing.status == 1)
        #expect(missing.errors.contains("no SQLite database at \(directory)/bridge.sqlite3"))

        let store = try SQLiteStore(path: "\(directory)/bridge.sqlite3")
        _ = try store.migrate()
        let existing = "\(directory)/copy.sqlite3"
        try Data("an older copy".utf8).write(to: URL(fileURLWithPath: existing))
        let refused = try RunningProcess(["backup", "--to", existing], environment: environment).wait()
        #expect(refused.status == 1)
        #expect(refused.errors.contains("already exists: add --force"))
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "an older copy")
        let forced = try RunningProcess(["backup", "--to", existing, "--force"], environment: environment).wait()
        #expect(forced.status == 0, "\(forced.errors)")
        #expect(try checkedUsers(in: existing).integrity == ["ok"])

        try Data().write(to: URL(fileURLWithPath: existing + "-wal"))
        let inUse = try RunningProcess(["backup", "--to", existing, "--force"], environment: environment).wait()
        #expect(inUse.status == 1)
        #expect(inUse.errors.contains("\(existing)-wal exists"))
        try FileManager.default.removeItem(atPath: existing + "-wal")

        let itself = try RunningProcess(["backup", "--to", "\(directory)/bridge.sqlite3", "--force"], environment: environment).wait()
        #expect(itself.status == 1)
        #expect(itself.errors.contains("is the database itself"))
        let noFolder = try RunningProcess(["backup", "--to", "\(directory)/absent/copy.sqlite3"], environment: environment).wait()
        #expect(noFolder.status == 1)
        #expect(noFolder.errors.contains("the folder \(directory)/absent does not exist"))
        let usage = try RunningProcess(["backup"], environment: environment).wait()
        #expect(usage.status == 2)
        #expect(usage.errors.contains("usage: apple-signin-bridge backup --to FILE"))

        environment["BRIDGE_DATABASE"] = "postgres://bridge:s3cret@127.0.0.1:9/bridge"
        let postgres = try RunningProcess(["backup", "--to", "\(directory)/pg.sqlite3"], environment: environment).wait()
        #expect(postgres.status == 1)
        #expect(postgres.errors.contains("pg_dump"))
        #expect(!postgres.errors.contains("s3cret"))
    }

    @Test("--version names the release and the schema version this build migrates to")
    func version() throws {
        let version = try RunningProcess(["--version"], environment: [:]).wait()
        #expect(version.status == 0)
        #expect(version.output.contains("(database schema version \(SchemaVersion.current))"))
    }
}
