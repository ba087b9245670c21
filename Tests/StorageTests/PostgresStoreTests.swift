import Foundation
import Testing
@testable import Storage

/// What only PostgreSQL has: concurrent migration by several instances, the pool, the
/// URL, TLS settings handed to libpq, and connections that break.
@Suite("PostgreSQL store") struct PostgresStoreTests {
    @Test("four stores migrating one fresh database at once: one applies every version, none fails")
    func concurrentMigration() throws {
        try withFreshPostgresDatabase { url in
            let stores = try (0..<4).map { _ in try PostgresStore(url: url, poolSize: 1) }
            let outcomes = Collected<String>()
            onThreads(stores.count) { index in
                do {
                    outcomes.append("\(try stores[index].migrate())")
                } catch {
                    outcomes.append("error: \(error)")
                }
            }
            let all = Migrations.all.map(\.version)
            #expect(outcomes.all.sorted() == ["\(all)", "[]", "[]", "[]"])
            let versions = try postgresScalar("SELECT COUNT(*) AS value FROM schema_migrations", in: url)
            #expect(versions == Int64(all.count))
        }
    }

    @Test("a database from a newer build is refused; a failing migration leaves nothing behind")
    func migrationErrors() throws {
        try withFreshPostgresDatabase { url in
            let store = try PostgresStore(url: url)
            _ = try store.migrate()
            let connection = try PostgresConnection(conninfo: url.connectionString, defaults: [:])
            let next = Migrations.all.last!.version + 1
            let migrations = Migrations.all + [
                Migration(version: next, sql: "CREATE TABLE half_done (a INTEGER); INSERT INTO no_such_table VALUES (1);"),
            ]
            let failed = #expect(throws: StoreError.self) {
                try PostgresMigrator(connection: connection, migrations: migrations, lockKey: PostgresStore.migrationLockKey,
                                     scrub: { $0 }).migrate(now: t0)
            }
            guard case let .migrationFailed(version, reason)? = failed else {
                Issue.record("expected migrationFailed, got \(String(describing: failed))")
                return
            }
            #expect(version == next && reason.contains("no_such_table"))
            let halfDone = try postgresScalar("SELECT COUNT(*) AS value FROM pg_tables WHERE tablename = 'half_done'", in: url)
            #expect(halfDone == 0)

            try connection.run("INSERT INTO schema_migrations (version, applied_at) VALUES (99, 0)")
            let tooNew = #expect(throws: StoreError.self) { try store.migrate() }
            #expect(tooNew == .schemaTooNew(databaseVersion: 99, supportedVersion: Migrations.all.last!.version))
        }
    }

    @Test("version 13 makes the keys compare byte by byte and keeps every row, link and cascade")
    func fromVersionTwelve() throws {
        try withFreshPostgresDatabase { url in
            #expect(try migrateToVersionTwelve(url) == Migrations.all.filter { $0.version <= 12 }.map(\.version))
            let store = try PostgresStore(url: url)
            let userID = try userWithSessions("001.kept", ["kept-session"], in: store)
            try store.write { tx in
                try tx.insertRefreshToken(refreshToken("kept-refresh", family: "f", sessionIDHash: "kept-session", userID: userID))
                try tx.insertLoginAttempt(loginAttempt("kept-state"))
            }
            func linguisticKeys() throws -> Int64 {
                try postgresScalar("""
                    SELECT COUNT(*) AS value FROM pg_attribute AS a JOIN pg_class AS c ON c.oid = a.attrelid
                    WHERE c.relname IN ('sessions', 'refresh_tokens', 'users', 'login_attempts')
                      AND a.atttypid = 'text'::regtype AND a.attcollation <> 'pg_catalog."C"'::regcollation
                      AND a.attname IN ('id_hash', 'token_hash', 'session_id_hash', 'provider_user_id', 'state')
                    """, in: url)
            }
            #expect(try linguisticKeys() == 5)

            // Version 13, and any version after it.
            #expect(try store.migrate() == allMigrationVersions.filter { $0 >= 13 })
            #expect(try linguisticKeys() == 0)
            #expect(try store.read { try $0.session(idHash: "kept-session", now: t0) }?.user.id == userID)
            #expect(try store.read { try $0.user(providerUserID: "001.kept") }?.id == userID)
            #expect(try store.write { try $0.consumeLoginAttempt(state: "kept-state", now: t0) })
            guard case .rotated = try store.write({ try $0.rotateRefreshToken(tokenHash: "kept-refresh", now: t0) }) else {
                Issue.record("the kept refresh token did not rotate")
                return
            }
            // The rebuilt keys still carry their links: deleting the member takes its session and its tokens.
            #expect(try store.write { try $0.deleteUser(id: userID) })
            #expect(try postgresScalar("SELECT COUNT(*) AS value FROM sessions", in: url) == 0)
            #expect(try postgresScalar("SELECT COUNT(*) AS value FROM refresh_tokens", in: url) == 0)
        }
    }

    /// What migrating a version-12 database applies: 13 and every later version (recorded on each backend, whether
    /// or not it runs anything there).
    static let versionsAfterTwelve = Migrations.all.map(\.version).filter { $0 > 12 }

    /// A database as version 12 left it, before its keys compared byte by byte; the versions applied.
    private func migrateToVersionTwelve(_ url: PostgresURL) throws -> [Int] {
        let connection = try PostgresConnection(conninfo: url.connectionString, defaults: [:])
        return try PostgresMigrator(connection: connection, migrations: Migrations.all.filter { $0.version <= 12 },
                                    lockKey: PostgresStore.migrationLockKey, scrub: { $0 }).migrate(now: t0)
    }

    @Test("a migration that deadlocks with an older instance's transaction is run again, and applies")
    func deadlockedMigrationRunsAgain() throws {
        try withFreshPostgresDatabase { url in
            _ = try migrateToVersionTwelve(url)
            let table = try #require(Migrations.byteOrderedColumns.last?.table)
            let outcome = Collected<String>()
            onThreads(2) { index in
                do {
                    if index == 0 {
                        // Version 13 locks every table it alters, one after another, and waits for the last.
                        Thread.sleep(forTimeInterval: 0.2)
                        outcome.append("migrated \(try PostgresStore(url: url, poolSize: 1).migrate())")
                        return
                    }
                    // An older instance's transaction holds the last table, then reads one the migration holds:
                    // a deadlock, found first by the migration, which has waited longer.
                    let older = try PostgresConnection(conninfo: url.connectionString, defaults: [:])
                    try older.execute("BEGIN; LOCK TABLE \(table) IN ROW EXCLUSIVE MODE")
                    let waiting = waitUntil(seconds: 10) {
                        (try? postgresScalar("SELECT COUNT(*) AS value FROM pg_locks WHERE NOT granted AND relation = '\(table)'::regclass",
                                             in: url)) == 1
                    }
                    outcome.append("migration waited: \(waiting)")
                    try older.execute("SELECT COUNT(*) FROM users")
                    try older.execute("COMMIT")
                } catch {
                    outcome.append("error: \(error)")
                }
            }
            #expect(Set(outcome.all) == ["migration waited: true", "migrated \(allMigrationVersions.filter { $0 >= 13 })"])
            #expect(try postgresScalar("SELECT MAX(version) AS value FROM schema_migrations", in: url)
                    == Int64(allMigrationVersions.last ?? 0))
        }
    }

    @Test("on a database whose collation is linguistic (ICU en-US), keys still order byte by byte: a member's sessions of one second list in SQLite's order")
    func keysOrderByteByByteUnderALinguisticCollation() throws {
        try withFreshPostgresDatabase(options: "TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'") { url in
            let store = try PostgresStore(url: url)
            _ = try store.migrate()
            // Byte by byte "B" (0x42) comes before "a" (0x61); en-US puts "a" first.
            let userID = try userWithSessions("001.order", ["a-session", "B-session"], in: store)
            #expect(try store.read { try $0.sessions(userID: userID) }.map(\.idHash) == ["B-session", "a-session"])
        }
    }

    @Test("statements found by where their text is stored: SQL built per call, more of it than the cache holds, and one text bound with NULL and with text, each answers as its own")
    func statementsFoundByAddress() throws {
        try withFreshPostgresDatabase { url in
            let connection = try PostgresConnection(conninfo: url.connectionString, defaults: [:])
            func value(_ sql: String, _ values: [SQLValue]) throws -> Int64 {
                try connection.query(sql, values) { $0.int64("value") }.first ?? -1
            }
            for round in 0..<2 {
                for index in 0..<600 {
                    let sql = "SELECT \(index) + $1 AS value -- built for this call"
                    #expect(try value(sql, [.integer(Int64(round))]) == Int64(index + round))
                }
            }
            let nullOrNot = "SELECT CASE WHEN CAST($1 AS TEXT) IS NULL THEN 1 ELSE 2 END AS value"
            for _ in 0..<3 {
                #expect(try value(nullOrNot, [.null]) == 1)
                #expect(try value(nullOrNot, [.text("x")]) == 2)
            }
        }
    }

    @Test("a database migrated while PostgreSQL's version 9 created nothing gets identity_token_uses at version 10, and replays are refused there")
    func versionTenCatchesUp() throws {
        try withFreshPostgresDatabase { url in
            let connection = try PostgresConnection(conninfo: url.connectionString, defaults: [:])
            _ = try PostgresStore(url: url).migrate()
            // What a database migrated by an earlier build looks like: version 9 recorded, the table absent.
            try connection.execute("DROP TABLE identity_token_uses; DELETE FROM schema_migrations WHERE version = 10")
            let store = try PostgresStore(url: url)
            #expect(try store.migrate() == [10])
            let record = { try store.write {
                try $0.recordIdentityTokenUse(tokenHash: "h", tokenExpiresAt: t0 + 600, expiresAt: t0 + 900, now: t0)
            } }
            #expect(try record() && !record())
        }
    }

    @Test("a write that lost a race is run again and counted as a serialization failure")
    func retriesAreCounted() throws {
        try withFreshPostgresDatabase { url in
            let (store, other) = (try PostgresStore(url: url), try PostgresStore(url: url))
            _ = try store.migrate()
            try store.write { try $0.insertLoginAttempt(loginAttempt("raced")) }
            #expect(store.writeRetries.map(\.count) == [0, 0])
            let (inside, goOn) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
            let runs = Collected<Bool>(), attempts = Collected<Int>()
            let finished = DispatchSemaphore(value: 0)
            Thread {
                let consumed = try? store.write { tx -> Bool in
                    // Read first, so that this transaction's snapshot predates the other store's commit.
                    _ = try tx.loginAttempt(state: "raced")
                    attempts.append(attempts.all.count)
                    if attempts.all.count == 1 { inside.signal(); goOn.wait() }
                    let won = try tx.consumeLoginAttempt(state: "raced", now: t0)
                    runs.append(won)
                    return won
                }
                runs.append(consumed ?? true)
                finished.signal()
            }.start()
            inside.wait()
            #expect(try other.write { try $0.consumeLoginAttempt(state: "raced", now: t0) })
            goOn.signal()
            finished.wait()
            // The first run's UPDATE failed on the row the other store changed; the second saw it consumed.
            #expect(attempts.all.count == 2 && runs.all == [false, false])
            #expect(store.writeRetries.first { $0.cause == "serialization_failure" }?.count == 1)
        }
    }

    typealias SignIn = (user: User, created: Bool)

    /// Two sign-ins at READ COMMITTED, `first` on `store` with its transaction held open until `second`, on `other`,
    /// has been seen waiting for it (half a second); then `first` commits. Their outcomes, nil for one that failed.
    func heldRace(_ store: PostgresStore, _ other: PostgresStore, waitingFor what: String,
                  first: @escaping @Sendable (any StoreTransaction) throws -> SignIn,
                  second: @escaping @Sendable (any StoreTransaction) throws -> SignIn) -> (first: SignIn?, second: SignIn?) {
        let (inside, goOn) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        let (firstFinished, secondFinished) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        let (firsts, seconds) = (Collected<SignIn>(), Collected<SignIn>())
        Thread {
            if let signedIn = try? store.write(isolation: .readCommitted, { tx in
                let signedIn = try first(tx)
                inside.signal()
                goOn.wait()
                return signedIn
            }) { firsts.append(signedIn) }
            firstFinished.signal()
        }.start()
        inside.wait()
        Thread {
            if let signedIn = try? other.write(isolation: .readCommitted, second) { seconds.append(signedIn) }
            secondFinished.signal()
        }.start()
        #expect(secondFinished.wait(timeout: .now() + 0.5) == .timedOut, "the second sign-in did not wait for \(what)")
        goOn.signal()
        firstFinished.wait()
        secondFinished.wait()
        return (firsts.all.first, seconds.all.first)
    }

    @Test("two sign-ins of one member at READ COMMITTED on two stores: the second updates the row the first left")
    func returningMemberRaceAtReadCommitted() throws {
        try withFreshPostgresDatabase { url in
            let (store, other) = (try PostgresStore(url: url), try PostgresStore(url: url))
            _ = try store.migrate()
            _ = try store.write { try $0.upsertAppleUser(appleProfile(sub: "raced", email: "old@example.com"), now: t0) }
            // The first sign-in brings the name (Apple's first-time `user`); the second a new email and no name.
            let (_, second) = heldRace(store, other, waitingFor: "the row", first: {
                try $0.upsertAppleUser(appleProfile(sub: "raced", email: "old@example.com", name: "Ada"), now: t0 + 1)
            }, second: {
                try $0.upsertAppleUser(appleProfile(sub: "raced", email: "new@example.com"), now: t0 + 2)
            })
            let stored = try #require(try store.read { try $0.user(providerUserID: "raced") })
            #expect(stored.displayName == "Ada" && stored.email == "new@example.com", "\(stored)")
            #expect(second?.user.displayName == "Ada")
            #expect(store.writeRetries.allSatisfy { $0.count == 0 } && other.writeRetries.allSatisfy { $0.count == 0 })
        }
    }

    @Test("two first sign-ins of one new member on two stores: the second waits for the first's insert, then signs the member in")
    func newMemberRaceAtReadCommitted() throws {
        try withFreshPostgresDatabase { url in
            let (store, other) = (try PostgresStore(url: url), try PostgresStore(url: url))
            _ = try store.migrate()
            // Neither finds the member in its snapshot; the second's insert conflicts with the first's uncommitted one.
            let (first, second) = heldRace(store, other, waitingFor: "the insert", first: {
                try $0.upsertAppleUser(appleProfile(sub: "newcomer", name: "Ada"), now: t0)
            }, second: {
                try $0.upsertAppleUser(appleProfile(sub: "newcomer", email: "new@example.com"), now: t0 + 1)
            })
            let created = try #require(first)
            let signedIn = try #require(second, "the second sign-in failed")
            #expect(created.created && !signedIn.created)
            #expect(signedIn.user.id == created.user.id)
            #expect(signedIn.user.displayName == "Ada" && signedIn.user.email == "new@example.com", "\(signedIn.user)")
            #expect(try postgresScalar("SELECT COUNT(*) AS value FROM users", in: url) == 1)
            #expect(store.writeRetries.allSatisfy { $0.count == 0 } && other.writeRetries.allSatisfy { $0.count == 0 })
        }
    }

    @Test("a write that waits past the lock timeout for a row another transaction holds fails as unavailable, and is counted")
    func lockTimeoutsAreCounted() throws {
        try withFreshPostgresDatabase { url in
            let store = try PostgresStore(url: url)
            _ = try store.migrate()
            try store.write { try $0.insertLoginAttempt(loginAttempt("held")) }
            let holder = try PostgresConnection(conninfo: url.connectionString, defaults: [:])
            try holder.execute("BEGIN; UPDATE login_attempts SET nonce = nonce WHERE state = 'held'")
            #expect(store.lockTimeouts == 0)
            #expect(throws: StoreError.self) {
                try store.write(isolation: .readCommitted) { try $0.consumeLoginAttempt(state: "held", now: t0) }
            }
            try holder.execute("ROLLBACK")
            #expect(store.lockTimeouts == 1)
            #expect(try store.write(isolation: .readCommitted) { try $0.consumeLoginAttempt(state: "held", now: t0) })
        }
    }

    @Test("the pool opens at most poolSize connections, and many threads share them")
    func poolSize() throws {
        try withFreshPostgresDatabase { url in
            let store = try PostgresStore(url: url, poolSize: 2)
            _ = try store.migrate()
            let errors = Collected<String>()
            onThreads(8) { thread in
                for i in 0..<20 {
                    do {
                        try store.write { try $0.insertLoginAttempt(loginAttempt("t\(thread)-\(i)")) }
                    } catch {
                        errors.append("\(error)")
                    }
                }
            }
            #expect(errors.all.isEmpty, "\(errors.all.prefix(3))")
            let rows = try postgresScalar("SELECT COUNT(*) AS value FROM login_attempts", in: url)
            let connections = try postgresScalar("""
                SELECT COUNT(*) AS value FROM pg_stat_activity
                WHERE datname = current_database() AND application_name = 'apple-signin-bridge'
                """, in: url)
            #expect(rows == 160)
            #expect(connections == 2)
        }
    }

    /// The test database's URL with `parameters` appended to its query.
    func url(_ url: PostgresURL, adding parameters: String) throws -> PostgresURL {
        try PostgresURL(url.connectionString + (url.connectionString.contains("?") ? "&" : "?") + parameters)
    }

    @Test("sslmode=verify-full with the server's certificate: every pooled connection is encrypted")
    func tlsWhenAsked() throws {
        let certificate = try TestPostgres.required("BRIDGE_TEST_POSTGRES_CA")
        try withFreshPostgresDatabase { plain in
            let store = try PostgresStore(url: try url(plain, adding: "sslmode=verify-full&sslrootcert=\(certificate)"),
                                          poolSize: 2)
            _ = try store.migrate()
            onThreads(4) { thread in _ = try? store.write { try $0.insertLoginAttempt(loginAttempt("tls-\(thread)")) } }
            let encrypted = try postgresScalar("""
                SELECT COUNT(*) FILTER (WHERE pg_stat_ssl.ssl) * 100 + COUNT(*) AS value
                FROM pg_stat_ssl JOIN pg_stat_activity USING (pid)
                WHERE datname = current_database() AND application_name = 'apple-signin-bridge'
                """, in: plain)
            #expect(encrypted == 202, "100 × encrypted + all: both pooled connections use TLS")
            let rows = try store.read { try $0.loginAttempt(state: "tls-0") }
            #expect(rows != nil)

            // The same server with sslmode=disable: the URL decides, not a default.
            let plainStore = try PostgresStore(url: try url(plain, adding: "sslmode=disable&application_name=plain-bridge"))
            _ = try plainStore.read { try $0.countUsers() }
            let unencrypted = try postgresScalar("""
                SELECT COUNT(*) FILTER (WHERE pg_stat_ssl.ssl) * 100 + COUNT(*) AS value
                FROM pg_stat_ssl JOIN pg_stat_activity USING (pid)
                WHERE datname = current_database() AND application_name = 'plain-bridge'
                """, in: plain)
            #expect(unencrypted == 1)
        }
    }

    @Test("a Unix socket named in the URL (its directory percent-encoded as the host): every pooled connection uses it")
    func unixSocket() throws {
        let socketURL = try PostgresURL(try TestPostgres.required("BRIDGE_TEST_POSTGRES_SOCKET_URL"))
        try withFreshPostgresDatabase { tcp in
            let name = try #require(tcp.database)
            let store = try PostgresStore(url: try socketURL.withDatabase(name), poolSize: 2)
            _ = try store.migrate()
            onThreads(4) { thread in _ = try? store.write { try $0.insertLoginAttempt(loginAttempt("socket-\(thread)")) } }
            #expect(try store.read { try $0.loginAttempt(state: "socket-3") } != nil)
            // A client on a Unix socket has no address; over TCP it has one.
            let overSocket = try postgresScalar("""
                SELECT COUNT(*) FILTER (WHERE client_addr IS NULL) * 100 + COUNT(*) AS value FROM pg_stat_activity
                WHERE datname = current_database() AND application_name = 'apple-signin-bridge'
                """, in: tcp)
            #expect(overSocket == 202, "100 × on the socket + all: both pooled connections use the socket")
        }
    }

    @Test("sslmode=verify-full without the certificate to check against is refused as unavailable")
    func tlsVerified() throws {
        let elsewhere = FileManager.default.temporaryDirectory.appendingPathComponent("no-such-ca-\(UUID().uuidString).crt").path
        let refused = try url(TestPostgres.adminURL(), adding: "sslmode=verify-full&sslrootcert=\(elsewhere)")
        let error = #expect(throws: StoreError.self) { try PostgresStore(url: refused) }
        guard case let .unavailable(message)? = error else {
            Issue.record("expected unavailable, got \(String(describing: error))")
            return
        }
        #expect(message.contains("root certificate"), "\(message)")
    }

    @Test("the connection dropped mid-write: unavailable, nothing half-written, and the store carries on")
    func connectionDroppedMidTransaction() throws {
        try withFreshPostgresDatabase { url in
            let store = try PostgresStore(url: url, poolSize: 3)
            _ = try store.migrate()
            let admin = try TestPostgres.adminConnection()
            let database = url.database ?? ""
            let error = #expect(throws: StoreError.self) {
                try store.write { tx in
                    try tx.insertLoginAttempt(loginAttempt("half"))
                    try admin.run("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1",
                                  [.text(database)])
                    try tx.insertLoginAttempt(loginAttempt("other-half"))
                }
            }
            guard case .unavailable? = error else {
                Issue.record("expected unavailable, got \(String(describing: error))")
                return
            }
            let found = try store.read { [try $0.loginAttempt(state: "half"), try $0.loginAttempt(state: "other-half")] }
            #expect(found == [nil, nil])
            try store.write { try $0.insertLoginAttempt(loginAttempt("after")) }
            let after = try store.read { try $0.loginAttempt(state: "after") }
            #expect(after != nil)
        }
    }

    @Test("BEGIN travels with the first statement: its isolation applies, a failing first statement rolls back, an empty unit sends nothing")
    func beginWithFirstStatement() throws {
        try withFreshPostgresDatabase { url in
            _ = try PostgresStore(url: url).migrate()
            let connection = try PostgresConnection(conninfo: url.connectionString, defaults: [:])
            connection.begin("BEGIN ISOLATION LEVEL SERIALIZABLE")
            #expect(!connection.isInsideTransaction)
            let level = try connection.query("SELECT current_setting('transaction_isolation') AS level") { try? $0.text("level") }
            #expect(level == ["serializable"])
            #expect(connection.isInsideTransaction)
            try connection.commit()
            #expect(!connection.isInsideTransaction)

            connection.begin("BEGIN")
            #expect(throws: PostgresFailure.self) { try connection.run("SELECT 1 / $1", [.integer(0)]) }
            #expect(connection.isInsideTransaction)  // aborted, waiting for the store's ROLLBACK
            try connection.execute("ROLLBACK")

            connection.begin("BEGIN")
            try connection.commit()  // nothing was sent: no "no transaction in progress"
            #expect(!connection.isInsideTransaction)
            // A BEGIN that fails is reported, and the statement sent with it did not run.
            connection.begin("BEGIN ISOLATION LEVEL NO SUCH LEVEL")
            #expect(throws: PostgresFailure.self) {
                try connection.run("INSERT INTO login_attempts (state, nonce, binding_hash, created_at, expires_at) VALUES ('x', 'n', 'b', 0, 1)")
            }
            #expect(!connection.isInsideTransaction)
            connection.clearFailure()
            #expect(try connection.query("SELECT COUNT(*) AS n FROM login_attempts") { $0.int64("n") } == [0])
        }
    }

    @Test("a statement sent without waiting is seen by the next one; its failure fails the commit and nothing is kept")
    func sentStatements() throws {
        try withFreshPostgresDatabase { url in
            let store = try PostgresStore(url: url)
            _ = try store.migrate()
            let userID = try store.write { try $0.upsertAppleUser(appleProfile(sub: "sent"), now: t0).user.id }
            let seen = try store.write { tx in
                try tx.insertSession(session("first", userID: userID))
                return try tx.session(idHash: "first", now: t0)?.user.id
            }
            #expect(seen == userID)
            // The duplicate goes out with the COMMIT: the write fails there, and the other session is not kept.
            #expect(throws: StoreError.self) {
                try store.write { tx in
                    try tx.insertSession(session("second", userID: userID))
                    try tx.insertSession(session("first", userID: userID))
                }
            }
            #expect(try store.read { try $0.session(idHash: "second", now: t0) } == nil)
            // The connection is clean afterwards.
            try store.write { try $0.insertSession(session("third", userID: userID)) }
            #expect(try store.read { try $0.session(idHash: "third", now: t0) }?.user.id == userID)

            let connection = try PostgresConnection(conninfo: url.connectionString, defaults: [:])
            connection.begin("BEGIN")
            try connection.send("SELECT 1 / $1", [.integer(0)])
            // Reported by the next statement that waits (here the first use of the UPDATE, which is prepared) or
            // the commit.
            #expect(throws: PostgresFailure.self) {
                try connection.send("UPDATE users SET display_name = 'x'")
                try connection.commit()
            }
            try connection.execute("ROLLBACK")
            #expect(try connection.query("SELECT COUNT(*) AS n FROM users WHERE display_name = 'x'") { $0.int64("n") } == [0])
            // Outside a transaction a sent statement simply runs.
            try connection.send("UPDATE users SET display_name = 'y'")
            #expect(try connection.query("SELECT COUNT(*) AS n FROM users WHERE display_name = 'y'") { $0.int64("n") } == [1])
        }
    }

    @Test("a sent statement that must change a row and changes none: its refusal is thrown and the COMMIT never goes out")
    func requirementStopsCommit() throws {
        struct Refused: Error {}
        try withFreshPostgresDatabase { url in
            _ = try PostgresStore(url: url).migrate()
            let connection = try PostgresConnection(conninfo: url.connectionString, defaults: [:])
            let update = "UPDATE users SET display_name = $1 WHERE id = $2"
            let insert = "INSERT INTO login_attempts (state, nonce, binding_hash, created_at, expires_at) VALUES ($1, 'n', 'b', 0, 1)"
            // Both prepared beforehand, so nothing is flushed before the commit.
            try connection.run(update, [.text("x"), .integer(-1)])
            try connection.run(insert, [.text("prepared")])
            connection.begin("BEGIN")
            try connection.send(update, [.text("x"), .integer(-1)], requiring: ChangeRequirement(rows: 1, refusal: Refused()))
            try connection.send(insert, [.text("kept?")])
            let failure = #expect(throws: PostgresFailure.self) { try connection.commit() }
            #expect(failure?.refusal is Refused)
            #expect(connection.isInsideTransaction)
            try connection.execute("ROLLBACK")
            #expect(try connection.query("SELECT COUNT(*) AS n FROM login_attempts WHERE state = 'kept?'") { $0.int64("n") } == [0])
        }
    }

    @Test("statement parameters are freed: a thousand 256 KiB values leave the process's memory where it was")
    func parametersAreFreed() throws {
        try withFreshPostgresDatabase { url in
            let connection = try PostgresConnection(conninfo: url.connectionString, defaults: [:])
            let value = SQLValue.blob([UInt8](repeating: 7, count: 256 * 1024))
            func residentMiB() throws -> Int {
                let statm = try String(contentsOfFile: "/proc/self/statm", encoding: .utf8).split(separator: " ")
                return (Int(statm[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) / (1024 * 1024)
            }
            for _ in 0..<20 { _ = try connection.query("SELECT length($1) AS n", [value]) { $0.int64("n") } }
            let before = try residentMiB()
            for _ in 0..<1000 {
                #expect(try connection.query("SELECT length($1) AS n", [value]) { $0.int64("n") } == [256 * 1024])
            }
            // Kept, they would be 250 MiB more.
            #expect(try residentMiB() - before < 100)
        }
    }
}

@Suite("Database URL") struct DatabaseURLTests {
    @Test("sqlite:PATH and both PostgreSQL schemes parse into their backend")
    func parses() throws {
        #expect(try DatabaseURL("sqlite:data/bridge.sqlite3") == .sqlite(path: "data/bridge.sqlite3"))
        for scheme in ["postgres", "postgresql"] {
            let parsed = try DatabaseURL("\(scheme)://bridge@db.internal:5433/bridge?sslmode=verify-full")
            guard case let .postgres(url) = parsed else {
                Issue.record("expected postgres, got \(parsed)")
                continue
            }
            #expect(url.database == "bridge")
            #expect(url.parameters["host"] == "db.internal" && url.parameters["port"] == "5433")
            #expect(url.parameters["sslmode"] == "verify-full")
        }
    }

    @Test("descriptions and errors never show the password", arguments: [
        "postgres://bridge:hunter2@db.internal/bridge",
        "postgresql://bridge:hunter2@db.internal:notaport/bridge",
        "postgres://db.internal/bridge?password=hunter2&nosuchoption=1",
        "mysql://bridge:hunter2@db",
    ])
    func noPasswordShown(value: String) {
        let shown: String
        do {
            shown = "\(try DatabaseURL(value))"
        } catch {
            shown = "\(error)"
        }
        #expect(!shown.contains("hunter2"), "\(shown)")
        #expect(shown.contains("***"), "\(shown)")
    }

    @Test("anything else is refused", arguments: ["sqlite:", "mysql://x", "postgres://h/db?nosuchoption=1", "bridge.sqlite3"])
    func refuses(value: String) {
        #expect(throws: StoreError.self) { try DatabaseURL(value) }
    }

    @Test("withDatabase keeps the server and parameters and swaps the database")
    func withDatabase() throws {
        let url = try PostgresURL("postgresql://u@127.0.0.1:5432/postgres?sslmode=disable")
        let other = try url.withDatabase("bridge_test_1")
        #expect(other.description == "postgresql://u@127.0.0.1:5432/bridge_test_1?sslmode=disable")
        let noPath = try PostgresURL("postgres://u@h").withDatabase("x")
        #expect(noPath.description == "postgres://u@h/x")
    }
}
