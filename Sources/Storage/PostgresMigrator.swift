import Foundation

/// Brings a PostgreSQL database up to the newest `Migration`, one transaction per
/// version, holding a session advisory lock throughout: instances starting together
/// take turns, and the later ones find the work done. The lock is released when this
/// returns, or by the server if the connection dies.
struct PostgresMigrator {
    let connection: PostgresConnection
    let migrations: [Migration]
    let lockKey: Int64
    let scrub: @Sendable (String) -> String

    func migrate(now: Date) throws -> [Int] {
        do {
            try connection.run("SELECT pg_advisory_lock($1)", [.integer(lockKey)])
        } catch {
            throw error.storeError(scrub: scrub)
        }
        defer { _ = try? connection.run("SELECT pg_advisory_unlock($1)", [.integer(lockKey)]) }
        let alreadyApplied: Set<Int>
        do {
            try connection.execute("""
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version INTEGER PRIMARY KEY,
                    applied_at BIGINT NOT NULL
                )
                """)
            alreadyApplied = Set(try connection.query("SELECT version FROM schema_migrations") { Int($0.int64("version")) })
        } catch {
            throw error.storeError(scrub: scrub)
        }
        let supported = migrations.last?.version ?? 0
        if let newest = alreadyApplied.max(), newest > supported {
            throw StoreError.schemaTooNew(databaseVersion: newest, supportedVersion: supported)
        }
        let pending = migrations.filter { !alreadyApplied.contains($0.version) }
        for migration in pending {
            try apply(migration, now: now)
        }
        return pending.map(\.version)
    }

    /// A migration that takes several tables' locks may deadlock with the writes of instances of the older build
    /// still serving (a rolling upgrade); PostgreSQL then aborts one side, most often the migration, which started
    /// waiting first. It is run again: by then the writes it met have committed.
    static let attemptsPerMigration = 10

    private func apply(_ migration: Migration, now: Date) throws {
        let appliedAt = try SQLValue.date(now)
        var attempt = 1
        while true {
            do {
                return try applyOnce(migration, appliedAt: appliedAt)
            } catch {
                if error.meansUnavailable { throw error.storeError(scrub: scrub) }
                guard error.isRetryable, attempt < Self.attemptsPerMigration else {
                    throw StoreError.migrationFailed(version: migration.version, reason: scrub(error.message))
                }
                attempt += 1
                PostgresUnitOfWork.backOff(attempt: attempt)
            }
        }
    }

    /// The migration and its record in one transaction, rolled back when it fails.
    private func applyOnce(_ migration: Migration, appliedAt: SQLValue) throws(PostgresFailure) {
        do {
            try connection.execute("BEGIN")
            if let sql = migration.sql(for: .postgres) {
                try connection.execute(sql)
            }
            try connection.run("INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)",
                               [.integer(Int64(migration.version)), appliedAt])
            try connection.execute("COMMIT")
        } catch {
            if connection.isUsable && connection.isInsideTransaction {
                try? connection.execute("ROLLBACK")
            }
            throw error
        }
    }
}
