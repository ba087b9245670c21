/// One numbered schema change. Versions are applied in ascending order, each once,
/// and recorded in `schema_migrations`.
struct Migration: Sendable {
    let version: Int
    /// One or more `;`-separated statements, without BEGIN/COMMIT.
    let sql: String
    /// For a migration that rebuilds a table other tables reference: foreign keys are
    /// switched off while it runs (otherwise dropping the old table would cascade into its
    /// children) and checked before it commits.
    var rebuildsReferencedTable = false
}
