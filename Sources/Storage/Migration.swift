/// One numbered schema change. Versions are applied in ascending order, each once,
/// and recorded in `schema_migrations`.
struct Migration: Sendable {
    let version: Int
    private let sqlite: String?
    private let postgres: String?
    /// For a migration that rebuilds a table other tables reference: foreign keys are
    /// switched off while it runs (otherwise dropping the old table would cascade into its
    /// children) and checked before it commits (SQLite).
    let rebuildsReferencedTable: Bool

    /// A change written once for every backend, with `SQLDialect` fragments where they differ: one or more
    /// `;`-separated statements, without BEGIN/COMMIT.
    init(version: Int, rebuildsReferencedTable: Bool = false, _ sql: (SQLDialect) -> String) {
        self.version = version
        self.sqlite = sql(.sqlite)
        self.postgres = sql(.postgres)
        self.rebuildsReferencedTable = rebuildsReferencedTable
    }

    /// The same statements on every backend.
    init(version: Int, sql: String) {
        self.init(version: version) { _ in sql }
    }

    /// A change only one backend needs, for a way it stores rows that the other does not have; there the
    /// version is recorded and nothing runs, so both keep one version sequence and one schema.
    init(version: Int, only dialect: SQLDialect, rebuildsReferencedTable: Bool = false, sql: String) {
        self.version = version
        self.sqlite = dialect == .sqlite ? sql : nil
        self.postgres = dialect == .postgres ? sql : nil
        self.rebuildsReferencedTable = rebuildsReferencedTable
    }

    /// Nil: nothing to run on this backend.
    func sql(for dialect: SQLDialect) -> String? {
        switch dialect {
        case .sqlite: sqlite
        case .postgres: postgres
        }
    }
}
