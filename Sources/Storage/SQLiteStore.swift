import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The embedded SQLite store.
///
/// One writer connection (writes are serialized in-process, so they never wait on
/// SQLITE_BUSY among themselves; `BEGIN IMMEDIATE` plus `busy_timeout` covers other
/// processes) and a few reader connections that, in WAL mode, read concurrently with
/// the writer from their own snapshots.
public final class SQLiteStore: Store {
    public let backendName = "sqlite"
    public let path: String
    private let writer: ConnectionPool
    private let readers: ConnectionPool

    private static let commonSetup = """
        PRAGMA busy_timeout = 5000;
        PRAGMA foreign_keys = ON;
        PRAGMA synchronous = NORMAL;
        """

    /// Opens (creating the file and its parent directory if needed) the database at `path`.
    /// Call `migrate()` before use.
    public init(path: String, readerCount: Int = 4) throws {
        guard !path.isEmpty, path != ":memory:", !path.hasPrefix("file:") else {
            // Each pooled connection would get its own in-memory database.
            throw StoreError.unsupportedURL(url: "sqlite:\(path)", reason: "SQLite needs a file path (sqlite:PATH)")
        }
        self.path = path
        try Self.createParentDirectory(of: path)
        try Self.createPrivateFile(at: path)
        // The writer opens first: it creates the file and switches it to WAL, which persists.
        let writerConnection = try SQLiteConnection(path: path, setup: Self.commonSetup)
        let journalMode = try writerConnection.query("PRAGMA journal_mode = WAL") { try $0.text("journal_mode") }.first ?? nil
        guard journalMode?.lowercased() == "wal" else {
            throw StoreError.database("cannot switch '\(path)' to WAL journal mode (got \(journalMode ?? "nothing"))")
        }
        writer = ConnectionPool([writerConnection])
        readers = ConnectionPool(try (0..<max(1, readerCount)).map { _ in
            try SQLiteConnection(path: path, setup: Self.commonSetup + "PRAGMA query_only = ON;")
        })
    }

    public func migrate() throws -> [Int] {
        try writer.withConnection { connection in
            try SQLiteMigrator(connection: connection, migrations: SQLiteMigrations.all).migrate(now: Date())
        }
    }

    public func read<T>(_ body: (any StoreTransaction) throws -> T) throws -> T {
        try readers.withConnection { connection in
            try Self.transaction(on: connection, begin: "BEGIN", body)
        }
    }

    public func write<T>(_ body: (any StoreTransaction) throws -> T) throws -> T {
        try writer.withConnection { connection in
            // IMMEDIATE takes the write lock up front, so a transaction that read first
            // cannot fail later with SQLITE_BUSY when it starts writing.
            try Self.transaction(on: connection, begin: "BEGIN IMMEDIATE", body)
        }
    }

    private static func transaction<T>(
        on connection: SQLiteConnection, begin: String, _ body: (any StoreTransaction) throws -> T
    ) throws -> T {
        if connection.isInsideTransaction {
            // Left open only if an earlier ROLLBACK failed; never build on top of it.
            try connection.run("ROLLBACK")
        }
        try connection.run(begin)
        do {
            let result = try body(SQLiteTransaction(connection: connection))
            try connection.run("COMMIT")
            return result
        } catch {
            // Some errors (e.g. SQLITE_FULL) already rolled the transaction back.
            if connection.isInsideTransaction {
                _ = try? connection.run("ROLLBACK")
            }
            throw error
        }
    }

    /// Folders this store creates are private (0700); an existing folder is left as it is.
    private static func createParentDirectory(of path: String) throws {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw StoreError.database("cannot create directory '\(directory.path)': \(error.localizedDescription)")
        }
    }

    /// Creates a missing database file 0600 before SQLite opens it: SQLite would create it
    /// world-readable, and gives its -wal and -shm files the database file's mode. An
    /// existing file keeps its mode.
    private static func createPrivateFile(at path: String) throws {
        let descriptor = open(path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0o600)
        if descriptor >= 0 {
            close(descriptor)
        } else if errno != EEXIST {
            throw StoreError.database("cannot create '\(path)': \(String(cString: strerror(errno)))")
        }
    }
}
