import Foundation

/// Brings a database up to the newest `Migration`, one transaction per version.
struct SQLiteMigrator {
    let connection: SQLiteConnection
    let migrations: [Migration]

    func migrate(now: Date) throws -> [Int] {
        try connection.run("""
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version INTEGER PRIMARY KEY,
                applied_at INTEGER NOT NULL
            )
            """)
        let supported = migrations.last?.version ?? 0
        let alreadyApplied = try appliedVersions()
        if let newest = alreadyApplied.max(), newest > supported {
            throw StoreError.schemaTooNew(databaseVersion: newest, supportedVersion: supported)
        }
        var appliedNow: [Int] = []
        for migration in migrations where !alreadyApplied.contains(migration.version) {
            if try apply(migration, now: now) {
                appliedNow.append(migration.version)
            }
        }
        return appliedNow
    }

    /// False when another process applied it first.
    private func apply(_ migration: Migration, now: Date) throws -> Bool {
        guard migration.rebuildsReferencedTable else {
            return try applyInTransaction(migration, now: now)
        }
        // Only takes effect outside a transaction.
        try connection.run("PRAGMA foreign_keys = OFF")
        defer { _ = try? connection.run("PRAGMA foreign_keys = ON") }
        return try applyInTransaction(migration, now: now)
    }

    private func applyInTransaction(_ migration: Migration, now: Date) throws -> Bool {
        do {
            try connection.run("BEGIN IMMEDIATE")
            // Checked again under the write lock: another process may have just migrated.
            if try appliedVersions().contains(migration.version) {
                try connection.run("COMMIT")
                return false
            }
            if let sql = migration.sql(for: .sqlite) {
                try connection.executeScript(sql)
            }
            if migration.rebuildsReferencedTable {
                let broken = try connection.query("PRAGMA foreign_key_check") { try $0.text("table") ?? "" }
                guard broken.isEmpty else {
                    throw StoreError.database("foreign keys broken in \(Set(broken).sorted())")
                }
            }
            try connection.run(
                "INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)",
                [.integer(Int64(migration.version)), .date(now)])
            try connection.run("COMMIT")
            return true
        } catch {
            if connection.isInsideTransaction {
                _ = try? connection.run("ROLLBACK")
            }
            throw StoreError.migrationFailed(version: migration.version, reason: "\(error)")
        }
    }

    private func appliedVersions() throws -> Set<Int> {
        Set(try connection.query("SELECT version FROM schema_migrations") { Int(try $0.requiredInteger("version")) })
    }
}
