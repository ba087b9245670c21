import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The embedded SQLite store.
///
/// One writer connection, on which concurrent writes share transactions (group commit,
/// see `SQLiteGroupCommit`; `BEGIN IMMEDIATE` plus `busy_timeout` covers other
/// processes), a few reader connections that, in WAL mode, read concurrently with the
/// writer from their own snapshots, and a background checkpointer, so that no write
/// pays for copying the WAL back into the database file.
public final class SQLiteStore: Store {
    public let backendName = "sqlite"
    public let readsWaitOnAnotherProcess = false
    public let path: String
    private let writer: SQLiteGroupCommit
    private let readers: SQLiteReaderPool
    private let checkpointer: SQLiteCheckpointer

    private static let commonSetup = """
        PRAGMA busy_timeout = 5000;
        PRAGMA foreign_keys = ON;
        PRAGMA synchronous = NORMAL;
        PRAGMA mmap_size = \(SQLiteTuning.mmapBytes);
        """

    /// Opens (creating the file and its parent directory if needed) the database at `path`.
    /// Call `migrate()` before use.
    public convenience init(path: String, readerCount: Int = 4) throws {
        try self.init(path: path, readerCount: readerCount, batchLimits: .init(), checkpointTiming: .init())
    }

    init(path: String, readerCount: Int, batchLimits: SQLiteGroupCommit.Limits,
         checkpointTiming: SQLiteCheckpointer.Timing) throws {
        guard !path.isEmpty, path != ":memory:", !path.hasPrefix("file:") else {
            // Each pooled connection would get its own in-memory database.
            throw StoreError.unsupportedURL(url: "sqlite:\(path)", reason: "SQLite needs a file path (sqlite:PATH)")
        }
        self.path = path
        try Self.createParentDirectory(of: path)
        try Self.createPrivateFile(at: path)
        // The writer opens first: it switches the file to WAL, which persists.
        // Checkpoints are the background checkpointer's, woken by the WAL's growth that the writer reports after each
        // commit; the writer checkpoints itself only as the safety net at twice the checkpointer's WAL limit, for when
        // a loaded machine keeps that thread off the CPU (without it the WAL grew past 50 MiB in a test under load).
        // temp_store = MEMORY keeps each batch's savepoint journal in memory: on disk, a batch
        // past 64 KiB of changed pages spilled it to a temporary file (create, unlink, writes).
        let writerConnection = try SQLiteConnection(path: path, setup: Self.commonSetup + """
            PRAGMA page_size = \(SQLiteTuning.pageSizeBytes);
            PRAGMA temp_store = MEMORY;
            PRAGMA cache_size = -\(SQLiteTuning.writerCacheKiB);
            PRAGMA journal_size_limit = \(SQLiteTuning.walSizeLimitBytes);
            """, bufferingWAL: true)
        let journalMode = try writerConnection.query("PRAGMA journal_mode = WAL") { try $0.text("journal_mode") }.first ?? nil
        guard journalMode?.lowercased() == "wal" else {
            throw StoreError.database("cannot switch '\(path)' to WAL journal mode (got \(journalMode ?? "nothing"))")
        }
        readers = SQLiteReaderPool(try (0..<max(1, readerCount)).map { _ in
            try SQLiteConnection(path: path, setup: Self.commonSetup + """
                PRAGMA query_only = ON;
                PRAGMA cache_size = -\(SQLiteTuning.readerCacheKiB);
                """)
        })
        writerConnection.observeWALCommits(checkpointingAt: 2 * checkpointTiming.walFrameLimit)
        let checkpointer = try SQLiteCheckpointer(path: path, timing: checkpointTiming)
        let writer = SQLiteGroupCommit(connection: writerConnection, limits: batchLimits, afterCommit: {
            checkpointer.noteCommit(walFrames: writerConnection.walFramesAfterLastCommit)
        })
        checkpointer.start { [weak writer] work in
            _ = try? writer?.withExclusiveConnection { _ in work() }
        }
        self.checkpointer = checkpointer
        self.writer = writer
    }

    deinit {
        // A write's completion may let go of the last reference on the writer thread, while the checkpointer waits
        // for that thread to pause writes for it: waiting there for the checkpointer to end would wait for ever.
        checkpointer.stop(waitingForItsThread: !writer.isOnWriterThread)
        writer.stop()
    }

    public func migrate() throws -> [Int] {
        try writer.withExclusiveConnection { connection in
            try SQLiteMigrator(connection: connection, migrations: Migrations.all).migrate(now: Date())
        }
    }

    public func read<T>(_ body: (any StoreTransaction) throws -> T) throws -> T {
        try readers.withConnection { connection in
            try Self.transaction(on: connection, begin: "BEGIN", body)
        }
    }

    /// The statement's own implicit read transaction is the snapshot.
    public func readOneStatement<T>(_ body: (any StoreTransaction) throws -> T) throws -> T {
        try readers.withConnection { connection in
            try Self.transaction(on: connection, begin: nil, body)
        }
    }

    /// Runs `body` in a savepoint of a transaction it may share with concurrent writes;
    /// returns once that transaction committed (see `SQLiteGroupCommit`).
    public func signIn(_ write: SignInWrite) throws -> SignInOutcome {
        try self.write { try $0.write(write) }.outcome()
    }

    public func signIn(_ write: SignInWrite, completion: @escaping @Sendable (Result<SignInOutcome, any Error>) -> Void) {
        self.write({ try $0.write(write) }, completion: { written in completion(Result { try written.get().outcome() }) })
    }

    public func write<T>(_ body: (any StoreTransaction) throws -> T) throws -> T {
        try writer.write(body)
    }

    public func write<T: Sendable>(_ body: @escaping @Sendable (any StoreTransaction) throws -> T,
                                   completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        writer.write(body, completion: completion)
    }

    /// Batches committed so far by this store's writer.
    var committedBatchCount: Int { writer.counts.commits }
    public var groupCommitCounts: GroupCommitCounts { writer.counts }
    var waitingWriterCount: Int { writer.waitingWriterCount }
    var checkpointCount: Int { checkpointer.checkpointCount }

    /// Checkpoints the writer ran itself, as the safety net, because the WAL had grown to twice the checkpointer's limit.
    var writerCheckpointCount: Int {
        (try? writer.withExclusiveConnection { $0.walSelfCheckpoints }) ?? 0
    }

    /// Stops the background checkpointer thread, as a CPU-starved machine would hold it (tests).
    func stopCheckpointerThread() { checkpointer.stop() }

    /// `begin` nil: no transaction around `body`, for a body of one statement.
    private static func transaction<T>(
        on connection: SQLiteConnection, begin: String?, _ body: (any StoreTransaction) throws -> T
    ) throws -> T {
        if connection.isInsideTransaction {
            // Left open only if an earlier ROLLBACK failed; never build on top of it.
            try connection.run("ROLLBACK")
        }
        guard let begin else { return try body(SQLTransaction(connection: connection)) }
        try connection.run(begin)
        do {
            let result = try body(SQLTransaction(connection: connection))
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
    static func createPrivateFile(at path: String) throws {
        let descriptor = open(path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0o600)
        if descriptor >= 0 {
            close(descriptor)
        } else if errno != EEXIST {
            throw StoreError.database("cannot create '\(path)': \(String(cString: strerror(errno)))")
        }
    }
}

/// Memory and WAL sizes for the SQLite store, chosen by measuring `store-bench`.
enum SQLiteTuning {
    /// Page size of a new database file (an existing one keeps the size it was made with; in WAL mode SQLite
    /// cannot change it). A sign-in's inserts land on random leaf pages, one page each per table and index keyed
    /// by a digest, so every page it dirties is written whole to the WAL, checksummed, and later copied back by
    /// the checkpointer: 2 KiB pages halve those bytes. Measured with `scripts/bench signin` at 256 connections
    /// in alternating runs: p99 34-44 ms against 38-51 ms with SQLite's default 4 KiB (lower in 7 of 8 pairs),
    /// sign-ins/s the same within noise. Rows and keys here are far below a 2 KiB page's overflow threshold.
    static let pageSizeBytes = 2048
    /// No memory map of the database file: pages are read with pread into SQLite's cache.
    /// With a map, a reader starting a transaction after the file changed (after every
    /// checkpoint, i.e. all the time under sign-ins) unmapped and remapped the whole file
    /// and then page-faulted each page back in: in a profile of full web sign-ins that
    /// was about a tenth of the server's CPU (munmap and page faults), against under 2 %
    /// for all preads. Mapped pages also counted once per connection in the RSS.
    static let mmapBytes = 0
    /// The writer's page cache (SQLite's default is 2 MiB): room for the index pages of
    /// the tables a sign-in touches once the database outgrows the default. 8 MiB and
    /// 16 MiB sign in alike on 30,000-sign-in databases (measured together with the
    /// readers' caches below: peak RSS at 256 connections 68 MiB before, 59 MiB after).
    static let writerCacheKiB = 8 * 1024
    /// A reader's page cache: a reader starts every transaction with an empty cache as
    /// soon as anything was written since its last one, so under sign-ins it never holds
    /// more than one transaction's few pages; SQLite's default is 2 MiB per reader.
    static let readerCacheKiB = 256
    /// After a checkpoint, a WAL file larger than this is truncated to it. Above the WAL's size when the checkpointer
    /// starts it over (`walFrameLimit` frames, 64 MiB with 4 KiB pages): each truncation gives blocks back to the file
    /// system, which on a disk mounted with `discard` waited for the device in the middle of a commit.
    static let walSizeLimitBytes = 128 * 1024 * 1024
}
