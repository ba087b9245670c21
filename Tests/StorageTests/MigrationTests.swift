import Foundation
import Testing
@testable import Storage

extension StorageTests {
    @Suite("Migrations") struct Migrations {
        @Test("a fresh database gets every migration and their tables")
        func freshDatabase() throws {
            try withTemporaryStore(migrated: false) { store, path throws in
                #expect(try store.migrate() == SQLiteMigrations.all.map(\.version))
                #expect(try tableNames(in: path).isSuperset(of: [
                    "schema_migrations", "users", "login_attempts", "sessions",
                    "api_nonces", "used_identity_tokens", "refresh_tokens",
                    "apple_tokens", "pending_revocations", "apple_notifications",
                    "provider_signing_keys", "provider_authorizations", "authorization_codes", "provider_grants",
                ]))
                #expect(try scalar("SELECT MAX(version) FROM schema_migrations", in: path) == 6)
            }
        }

        @Test("a database at version 1 gets every later version and keeps its data")
        func fromVersionOne() throws {
            try withTemporaryStore(migrated: false) { store, path throws in
                let connection = try SQLiteConnection(path: path, setup: "")
                #expect(try SQLiteMigrator(connection: connection, migrations: [SQLiteMigrations.all[0]])
                    .migrate(now: t0) == [1])
                try connection.run("""
                    INSERT INTO users (id, provider, provider_user_id, email, is_private_email, email_verified,
                                       display_name, created_at, updated_at)
                    VALUES (7, 'apple', '001.old', 'old@example.com', 1, 1, 'Kim', ?1, ?1)
                    """, [.date(t0)])
                try connection.run("""
                    INSERT INTO sessions (id_hash, user_id, flow, nonce_verified, created_at, expires_at)
                    VALUES ('old-session', 7, 'web', 1, ?1, ?2)
                    """, [.date(t0), .date(t0 + 3600)])

                #expect(try store.migrate() == Array(SQLiteMigrations.all.dropFirst().map(\.version)))
                let user = try store.read { try $0.user(id: 7) }
                #expect(user == User(id: 7, provider: "apple", providerUserID: "001.old", email: "old@example.com",
                                     isPrivateEmail: true, emailVerified: true, displayName: "Kim",
                                     createdAt: t0, updatedAt: t0, emailForwardingEnabled: true))
                #expect(try store.read { try $0.session(idHash: "old-session", now: t0) }?.user == user)
                #expect(try store.read { try $0.user(providerUserID: "001.old") } == user)
                #expect(try tableNames(in: path).isSuperset(of: ["refresh_tokens", "apple_tokens", "pending_revocations"]))
            }
        }

        @Test("an up-to-date database applies nothing, also after reopening")
        func upToDate() throws {
            try withTemporaryStore { store, path throws in
                #expect(try store.migrate() == [])
                #expect(try SQLiteStore(path: path).migrate() == [])
                #expect(try scalar("SELECT COUNT(*) FROM schema_migrations", in: path) == Int64(SQLiteMigrations.all.count))
            }
        }

        @Test("a database from a newer build is refused with a clear error")
        func databaseFromTheFuture() throws {
            try withTemporaryStore { store, path throws in
                let connection = try SQLiteConnection(path: path, setup: "")
                try connection.run("INSERT INTO schema_migrations (version, applied_at) VALUES (99, 0)")
                let error = #expect(throws: StoreError.self) { try store.migrate() }
                #expect(error == .schemaTooNew(databaseVersion: 99, supportedVersion: SQLiteMigrations.all.last!.version))
                #expect(error?.description.contains("newer than this build supports") == true)
            }
        }

        @Test("a failing migration leaves nothing of itself behind")
        func failingMigrationRollsBack() throws {
            try withTemporaryStore(migrated: false) { _, path throws in
                let connection = try SQLiteConnection(path: path, setup: "")
                let next = SQLiteMigrations.all.last!.version + 1
                let migrations = SQLiteMigrations.all + [
                    Migration(version: next, sql: "CREATE TABLE half_done (a INTEGER); INSERT INTO no_such_table VALUES (1);"),
                ]
                let error = #expect(throws: StoreError.self) {
                    try SQLiteMigrator(connection: connection, migrations: migrations).migrate(now: t0)
                }
                guard case let .migrationFailed(version, reason) = error else {
                    Issue.record("expected migrationFailed, got \(String(describing: error))")
                    return
                }
                #expect(version == next)
                #expect(reason.contains("no_such_table"))
                #expect(try !tableNames(in: path).contains("half_done"))
                #expect(try scalar("SELECT MAX(version) FROM schema_migrations", in: path) == Int64(next - 1))
            }
        }

        @Test("versions start at 1 and strictly increase")
        func versionsAreOrdered() {
            // Gaps are allowed: a number may be held for a line of work that has not arrived yet.
            let versions = SQLiteMigrations.all.map(\.version)
            #expect(versions.first == 1)
            #expect(zip(versions, versions.dropFirst()).allSatisfy { $0 < $1 })
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
