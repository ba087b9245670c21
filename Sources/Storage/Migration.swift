/// One numbered schema change. Versions are applied in ascending order, each once,
/// and recorded in `schema_migrations`.
struct Migration: Sendable {
    let version: Int
    /// One or more `;`-separated statements, without BEGIN/COMMIT.
    let sql: String
}
