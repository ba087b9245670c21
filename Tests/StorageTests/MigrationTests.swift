import Testing
@testable import Storage

extension StorageTests {
    @Suite("Migrations") struct Migrations {
        @Test("a fresh database gets migration 1 and its tables")
        func freshDatabase() throws {
            try withTemporaryStore(migrated: false) { store, path throws in
                #expect(try store.migrate() == [1])
                #expect(try tableNames(in: path).isSuperset(of: ["schema_migrations", "users", "login_attempts", "sessions"]))
                #expect(try scalar("SELECT MAX(version) FROM schema_migrations", in: path) == 1)
            }
        }

        @Test("an up-to-date database applies nothing, also after reopening")
        func upToDate() throws {
            try withTemporaryStore { store, path throws in
                #expect(try store.migrate() == [])
                #expect(try SQLiteStore(path: path).migrate() == [])
                #expect(try scalar("SELECT COUNT(*) FROM schema_migrations", in: path) == 1)
            }
        }

        @Test("a database from a newer build is refused with a clear error")
        func databaseFromTheFuture() throws {
            try withTemporaryStore { store, path throws in
                let connection = try SQLiteConnection(path: path, setup: "")
                try connection.run("INSERT INTO schema_migrations (version, applied_at) VALUES (99, 0)")
                let error = #expect(throws: StoreError.self) { try store.migrate() }
                #expect(error == .schemaTooNew(databaseVersion: 99, supportedVersion: 1))
                #expect(error?.description.contains("newer than this build supports") == true)
            }
        }

        @Test("a failing migration leaves nothing of itself behind")
        func failingMigrationRollsBack() throws {
            try withTemporaryStore(migrated: false) { _, path throws in
                let connection = try SQLiteConnection(path: path, setup: "")
                let migrations = SQLiteMigrations.all + [
                    Migration(version: 2, sql: "CREATE TABLE half_done (a INTEGER); INSERT INTO no_such_table VALUES (1);"),
                ]
                let error = #expect(throws: StoreError.self) {
                    try SQLiteMigrator(connection: connection, migrations: migrations).migrate(now: t0)
                }
                guard case let .migrationFailed(version, reason) = error else {
                    Issue.record("expected migrationFailed, got \(String(describing: error))")
                    return
                }
                #expect(version == 2)
                #expect(reason.contains("no_such_table"))
                #expect(try !tableNames(in: path).contains("half_done"))
                #expect(try scalar("SELECT MAX(version) FROM schema_migrations", in: path) == 1)
            }
        }

        @Test("versions start at 1 and strictly increase")
        func versionsAreOrdered() {
            let versions = SQLiteMigrations.all.map(\.version)
            #expect(versions == Array(1...versions.count))
        }

        @Test("the file is in WAL mode")
        func walMode() throws {
            try withTemporaryStore { _, path throws in
                let connection = try SQLiteConnection(path: path, setup: "")
                #expect(try connection.query("PRAGMA journal_mode") { $0.text(0) } == ["wal"])
            }
        }
    }
}
