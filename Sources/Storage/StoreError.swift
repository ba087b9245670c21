public enum StoreError: Error, Equatable, CustomStringConvertible {
    /// A numbered migration could not be applied; nothing of it was kept.
    case migrationFailed(version: Int, reason: String)
    /// The database was migrated by a newer build than this one.
    case schemaTooNew(databaseVersion: Int, supportedVersion: Int)
    /// The database reported an error (its own message included).
    case database(String)
    /// A uniqueness or foreign-key constraint refused the write.
    case conflict(String)
    /// The caller passed a value the store will not write.
    case invalidArgument(String)
    /// `url` is already redacted: it never contains a password.
    case unsupportedURL(url: String, reason: String)
    /// The database server cannot be reached or went away; trying again later may work.
    /// Nothing of the interrupted unit of work was committed unless the connection broke
    /// during COMMIT itself.
    case unavailable(String)

    public var description: String {
        switch self {
        case let .migrationFailed(version, reason):
            "database migration \(version) failed: \(reason)"
        case let .schemaTooNew(databaseVersion, supportedVersion):
            "database schema version \(databaseVersion) is newer than this build supports (\(supportedVersion)); "
                + "run a newer build or use another database"
        case let .database(message):
            "database error: \(message)"
        case let .conflict(message):
            "database conflict: \(message)"
        case let .invalidArgument(message):
            "invalid value for the store: \(message)"
        case let .unsupportedURL(url, reason):
            "unsupported database URL '\(url)': \(reason)"
        case let .unavailable(message):
            "database unavailable: \(message)"
        }
    }
}
