public enum StoreFactory {
    /// Opens the store named by a `BRIDGE_DATABASE` value: `sqlite:PATH` (the parent
    /// directory of PATH is created when missing). Does not migrate.
    public static func open(_ url: String) throws -> any Store {
        if url.hasPrefix("sqlite:") {
            return try SQLiteStore(path: String(url.dropFirst("sqlite:".count)))
        }
        let shown = DatabaseURL.redactingPassword(url)
        if url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") {
            throw StoreError.unsupportedURL(url: shown, reason: "PostgreSQL is not yet supported; use sqlite:PATH")
        }
        throw StoreError.unsupportedURL(url: shown, reason: "expected sqlite:PATH or postgres://…")
    }
}
