import Foundation
import Testing
@testable import Storage

extension SQLiteStoreSpecifics {
    @Suite("Migrations") struct Migrations {
        @Test("a fresh database gets every migration and their tables")
        func freshDatabase() throws {
            try withTemporarySQLiteStore(migrated: false) { store, path throws in
                #expect(try store.migrate() == allMigrationVersions)
                #expect(try tableNames(in: path).isSuperset(of: [
                    "schema_migrations", "users", "login_attempts", "sessions",
                    "api_nonces", "used_identity_tokens", "refresh_tokens",
                    "apple_tokens", "pending_revocations", "apple_notifications",
                    "provider_signing_keys", "provider_authorizations", "authorization_codes", "provider_grants",
                ]))
                #expect(try scalar("SELECT MAX(version) AS value FROM schema_migrations", in: path) == Int64(allMigrationVersions.last ?? 0))
            }
        }

        @Test("a new database file gets 2 KiB pages; one made with another page size keeps it and works")
        func pageSize() throws {
            try withTemporarySQLiteStore { store, path throws in
                #expect(try scalar("SELECT page_size AS value FROM pragma_page_size", in: path) == 2048)
                let (user, _) = try store.write { try $0.upsertAppleUser(appleProfile(sub: "001.new"), now: t0) }
                #expect(try store.read { try $0.user(id: user.id) } == user)
            }
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("page-size-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let path = directory.appendingPathComponent("bridge.sqlite3").path
            do {
                let older = try SQLiteConnection(path: path, setup: "PRAGMA page_size = 4096; PRAGMA journal_mode = WAL;")
                try older.executeScript("CREATE TABLE made_before (x); INSERT INTO made_before VALUES (1);")
            }
            let store = try SQLiteStore(path: path)
            _ = try store.migrate()
            #expect(try scalar("SELECT page_size AS value FROM pragma_page_size", in: path) == 4096)
            let (user, _) = try store.write { try $0.upsertAppleUser(appleProfile(sub: "001.kept"), now: t0) }
            #expect(try store.read { try $0.user(id: user.id) } == user)
            #expect(try scalar("SELECT x AS value FROM made_before", in: path) == 1)
        }

        @Test("a database at version 1 gets every later version and keeps its data")
        func fromVersionOne() throws {
            try withTemporarySQLiteStore(migrated: false) { store, path throws in
                let connection = try SQLiteConnection(path: path, setup: "")
                #expect(try SQLiteMigrator(connection: connection, migrations: [Storage.Migrations.all[0]])
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

                #expect(try store.migrate() == Array(allMigrationVersions.dropFirst()))
                let user = try store.read { try $0.user(id: 7) }
                #expect(user == User(id: 7, provider: "apple", providerUserID: "001.old", email: "old@example.com",
                                     isPrivateEmail: true, emailVerified: true, displayName: "Kim",
                                     createdAt: t0, updatedAt: t0, emailForwardingEnabled: true))
                #expect(try store.read { try $0.session(idHash: "old-session", now: t0) }?.user == user)
                #expect(try store.read { try $0.user(providerUserID: "001.old") } == user)
                #expect(try tableNames(in: path).isSuperset(of: ["refresh_tokens", "apple_tokens", "pending_revocations"]))
            }
        }

        @Test("a version-3 database keeps its users, their links and cascades, and stops reusing ids")
        func fromVersionThree() throws {
            try withTemporarySQLiteStore(migrated: false) { store, path throws in
                let connection = try SQLiteConnection(path: path, setup: "PRAGMA foreign_keys = ON;")
                #expect(try SQLiteMigrator(connection: connection, migrations: Array(Storage.Migrations.all.prefix(3)))
                    .migrate(now: t0) == [1, 2, 3])
                try connection.executeScript("""
                    INSERT INTO users (id, provider, provider_user_id, email, created_at, updated_at, email_forwarding_enabled)
                    VALUES (1, 'apple', 'one', 'one@example.com', \(t0.timeIntervalSince1970), \(t0.timeIntervalSince1970), 0),
                           (2, 'apple', 'two', NULL, \(t0.timeIntervalSince1970), \(t0.timeIntervalSince1970), 1);
                    INSERT INTO sessions (id_hash, user_id, flow, nonce_verified, created_at, expires_at)
                    VALUES ('one-session', 1, 'web', 1, \(t0.timeIntervalSince1970), \(t0.timeIntervalSince1970 + 3600)),
                           ('two-session', 2, 'api', 0, \(t0.timeIntervalSince1970), \(t0.timeIntervalSince1970 + 3600));
                    INSERT INTO apple_tokens (user_id, client_id, encrypted_refresh_token, updated_at)
                    VALUES (2, 'c', x'01', \(t0.timeIntervalSince1970));
                    """)

                #expect(try store.migrate() == Array(allMigrationVersions.dropFirst(3)))
                let one = try #require(try store.read { try $0.user(id: 1) })
                #expect(one.email == "one@example.com")
                #expect(!one.emailForwardingEnabled)
                #expect(try store.read { try $0.session(idHash: "one-session", now: t0) }?.user == one)
                #expect(try store.read { try $0.appleToken(userID: 2) } != nil)

                // Cascades still reach the rebuilt table: deleting the newest user takes its rows…
                #expect(try store.write { try $0.deleteUser(id: 2) })
                #expect(try store.read { try $0.session(idHash: "two-session", now: t0) } == nil)
                #expect(try store.read { try $0.appleToken(userID: 2) } == nil)
                // …and its id is not given to the next user.
                let next = try store.write { try $0.upsertAppleUser(appleProfile(sub: "three"), now: t0).user }
                #expect(next.id == 3)
                #expect(try scalar("SELECT COUNT(*) AS value FROM pragma_foreign_key_check", in: path) == 0)
            }
        }

        @Test("version 8 rebuilds sessions and used identity tokens without rowids, keeping rows, links and cascades")
        func fromVersionSeven() throws {
            try withTemporarySQLiteStore(migrated: false) { store, path throws in
                let connection = try SQLiteConnection(path: path, setup: "PRAGMA foreign_keys = ON;")
                #expect(try SQLiteMigrator(connection: connection, migrations: Array(Storage.Migrations.all.prefix(7)))
                    .migrate(now: t0) == [1, 2, 3, 4, 5, 6, 7])
                let seven = SQLTransaction(connection: connection)
                let userID = try seven.upsertAppleUser(appleProfile(sub: "kept"), now: t0).user.id
                try seven.insertSession(session("kept-session", userID: userID))
                try seven.insertRefreshToken(refreshToken("kept-refresh", family: "f", sessionIDHash: "kept-session", userID: userID))
                // As this version recorded a token (its table then had a rowid).
                #expect(try connection.run("INSERT INTO used_identity_tokens (token_hash, expires_at) VALUES (?, ?)",
                                           [.text("kept-token"), .date(t0 + 600)]) == 1)

                #expect(try store.migrate() == Storage.Migrations.all.map(\.version).filter { $0 >= 8 })
                let withoutRowid = try scalar("""
                    SELECT COUNT(*) AS value FROM sqlite_schema
                    WHERE name IN ('sessions', 'used_identity_tokens') AND sql LIKE '%WITHOUT ROWID'
                    """, in: path)
                #expect(withoutRowid == 2)
                #expect(try store.read { try $0.session(idHash: "kept-session", now: t0) }?.user.id == userID)
                // The token is still remembered: presenting it again is a replay.
                #expect(try store.write { try $0.recordIdentityTokenUse(tokenHash: "kept-token", tokenExpiresAt: t0, expiresAt: t0 + 600, now: t0) } == false)
                let rotation = try store.write { try $0.rotateRefreshToken(tokenHash: "kept-refresh", now: t0) }
                guard case .rotated = rotation else {
                    Issue.record("the kept refresh token did not rotate: \(rotation)")
                    return
                }
                #expect(try scalar("SELECT COUNT(*) AS value FROM pragma_foreign_key_check", in: path) == 0)
                // Deleting the user still cascades into the rebuilt sessions table.
                #expect(try store.write { try $0.deleteUser(id: userID) })
                #expect(try scalar("SELECT COUNT(*) AS value FROM sessions", in: path) == 0)
            }
        }

        @Test("version 9 keys used identity tokens by their expiry; a token recorded before it is still refused until its record expires")
        func fromVersionEight() throws {
            try withTemporarySQLiteStore(migrated: false) { store, path throws in
                let connection = try SQLiteConnection(path: path, setup: "PRAGMA foreign_keys = ON;")
                #expect(try SQLiteMigrator(connection: connection, migrations: Array(Storage.Migrations.all.prefix(8)))
                    .migrate(now: t0) == [1, 2, 3, 4, 5, 6, 7, 8])
                #expect(try connection.run("INSERT INTO used_identity_tokens (token_hash, expires_at) VALUES (?, ?)",
                                           [.text("earlier-token"), .date(t0 + 660)]) == 1)

                #expect(try store.migrate() == Storage.Migrations.all.map(\.version).filter { $0 >= 9 })
                let record = { (hash: String, now: Date) in
                    try store.write { try $0.recordIdentityTokenUse(tokenHash: hash, tokenExpiresAt: t0 + 600,
                                                                     expiresAt: t0 + 660, now: now) }
                }
                // Used before the upgrade: a replay, whatever its new key would be, until the old record expires.
                #expect(try record("earlier-token", t0 + 1) == false)
                #expect(try record("earlier-token", t0 + 659) == false)
                #expect(try record("later-token", t0 + 1))
                #expect(try record("later-token", t0 + 2) == false)
                #expect(try scalar("SELECT COUNT(*) AS value FROM identity_token_uses", in: path) == 1)
                // Housekeeping empties both tables once the records expired.
                #expect(try store.write { try $0.deleteExpired(now: t0 + 660) } == 2)
                #expect(try scalar("SELECT COUNT(*) AS value FROM used_identity_tokens", in: path) == 0)
                #expect(try scalar("SELECT COUNT(*) AS value FROM identity_token_uses", in: path) == 0)
                #expect(try record("earlier-token", t0 + 660))
            }
        }

        @Test("an up-to-date database applies nothing, also after reopening")
        func upToDate() throws {
            try withTemporarySQLiteStore { store, path throws in
                #expect(try store.migrate() == [])
                #expect(try SQLiteStore(path: path).migrate() == [])
                #expect(try scalar("SELECT COUNT(*) AS value FROM schema_migrations", in: path) == Int64(allMigrationVersions.count))
            }
        }

        @Test("a database from a newer build is refused with a clear error")
        func databaseFromTheFuture() throws {
            try withTemporarySQLiteStore { store, path throws in
                let connection = try SQLiteConnection(path: path, setup: "")
                try connection.run("INSERT INTO schema_migrations (version, applied_at) VALUES (99, 0)")
                let error = #expect(throws: StoreError.self) { try store.migrate() }
                #expect(error == .schemaTooNew(databaseVersion: 99, supportedVersion: allMigrationVersions.last ?? 0))
                #expect(error?.description.contains("newer than this build supports") == true)
            }
        }

        @Test("a failing migration leaves nothing of itself behind")
        func failingMigrationRollsBack() throws {
            try withTemporarySQLiteStore(migrated: false) { _, path throws in
                let connection = try SQLiteConnection(path: path, setup: "")
                let next = Storage.Migrations.all.last!.version + 1
                let migrations = Storage.Migrations.all + [
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
                #expect(try scalar("SELECT MAX(version) AS value FROM schema_migrations", in: path) == Int64(next - 1))
            }
        }

        @Test("versions start at 1 and strictly increase")
        func versionsAreOrdered() {
            // Gaps are allowed: a number may be held for a line of work that has not arrived yet.
            let versions = Storage.Migrations.all.map(\.version)
            #expect(versions.first == 1)
            #expect(zip(versions, versions.dropFirst()).allSatisfy { $0 < $1 })
        }

        @Test("the file is in WAL mode")
        func walMode() throws {
            try withTemporarySQLiteStore { _, path throws in
                let connection = try SQLiteConnection(path: path, setup: "")
                #expect(try connection.query("PRAGMA journal_mode") { try $0.text("journal_mode") } == ["wal"])
            }
        }
    }
}
