import Foundation
import Testing
@testable import Storage

extension StoreBehaviour {
    @Suite("StoreFactory") struct Factory {
        @Test("sqlite:PATH opens SQLite and creates missing directories")
        func opensSQLite() throws {
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("storage-factory-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: root) }
            let store = try StoreFactory.open("sqlite:\(root.path)/nested/data/bridge.sqlite3")
            #expect(store.backendName == "sqlite")
            #expect(try store.migrate() == allMigrationVersions)
            #expect(FileManager.default.fileExists(atPath: "\(root.path)/nested/data/bridge.sqlite3"))
        }

        @Test("a PostgreSQL URL opens a PostgreSQL store, which migrates to every version and works")
        func opensPostgres() throws {
            try withFreshPostgresDatabase { url in
                let store = try StoreFactory.open(url.connectionString, poolSize: 2)
                #expect(store.backendName == "postgres")
                #expect(try store.migrate() == allMigrationVersions)
                try store.write { try $0.insertLoginAttempt(loginAttempt("s")) }
                #expect(try store.read { try $0.loginAttempt(state: "s") } == loginAttempt("s"))
            }
        }

        @Test("an unknown scheme is refused, naming the value")
        func rejectsUnknownScheme() {
            let error = #expect(throws: StoreError.self) { try StoreFactory.open("mysql://x") }
            #expect(error?.description.contains("mysql://x") == true)
        }

        @Test("postgres:// opens PostgreSQL; when it cannot be reached the error says so, without the password")
        func postgresUnreachable() {
            // Port 1 on loopback: nothing listens there, so the connection is refused at once.
            let error = #expect(throws: StoreError.self) {
                try StoreFactory.open("postgres://bridge:hunter2@127.0.0.1:1/bridge")
            }
            guard case let .unavailable(message)? = error else {
                Issue.record("expected unavailable, got \(String(describing: error))")
                return
            }
            #expect(message.contains("postgres://bridge:***@127.0.0.1:1/bridge"))
            #expect(!message.contains("hunter2"))
        }

        @Test("in-memory SQLite is refused", arguments: ["sqlite::memory:", "sqlite:"])
        func rejectsNonFile(url: String) {
            #expect(throws: StoreError.self) { try StoreFactory.open(url) }
        }

        @Test("password redaction", arguments: [
            ("postgres://u:p@h/db", "postgres://u:***@h/db"),
            ("postgres://u@h/db", "postgres://u@h/db"),
            ("postgres://h/db?x=a:b@c", "postgres://h/db?x=a:b@c"),
            ("mysql://x", "mysql://x"),
            ("plain", "plain"),
            ("host=db password=s3cret user=u", "host=db password=*** user=u"),
            ("postgres://h/db?user=u&PASSWORD=s3cret&x=1", "postgres://h/db?user=u&PASSWORD=***&x=1"),
        ])
        func redaction(url: String, shown: String) {
            #expect(DatabaseURL.redactingPassword(url) == shown)
        }
    }
}
