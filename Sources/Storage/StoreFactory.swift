public enum StoreFactory {
    /// Opens the store named by a `BRIDGE_DATABASE` value: `sqlite:PATH` (the parent
    /// directory of PATH is created when missing) or a PostgreSQL URI (connects once, with
    /// up to `poolSize` connections later). Does not migrate.
    public static func open(_ url: String, poolSize: Int = PostgresStore.defaultPoolSize) throws -> any Store {
        try open(DatabaseURL(url), poolSize: poolSize)
    }

    public static func open(_ url: DatabaseURL, poolSize: Int = PostgresStore.defaultPoolSize) throws -> any Store {
        switch url {
        case let .sqlite(path):
            try SQLiteStore(path: path)
        case let .postgres(postgresURL):
            try PostgresStore(url: postgresURL, poolSize: poolSize)
        }
    }
}
