import CSQLite
import CSQLitePageCache
import CSQLiteWALBuffer

/// The current row of a running statement, read by column name; valid only inside the
/// decode closure.
struct SQLiteRow: StoredRow {
    fileprivate let statement: OpaquePointer
    fileprivate let columns: [String: Int32]

    func integer(_ column: String) throws -> Int64? {
        let index = try self.index(of: column)
        return isNull(index) ? nil : sqlite3_column_int64(statement, index)
    }

    func text(_ column: String) throws -> String? {
        let index = try self.index(of: column)
        // sqlite3_column_text first, then sqlite3_column_bytes, as SQLite documents.
        guard let bytes = sqlite3_column_text(statement, index) else { return nil }
        let count = Int(sqlite3_column_bytes(statement, index))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    func blob(_ column: String) throws -> [UInt8]? {
        let index = try self.index(of: column)
        guard !isNull(index) else { return nil }
        // sqlite3_column_blob first, then sqlite3_column_bytes, as SQLite documents.
        guard let bytes = sqlite3_column_blob(statement, index) else { return [] }
        let count = Int(sqlite3_column_bytes(statement, index))
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    private func isNull(_ index: Int32) -> Bool {
        sqlite3_column_type(statement, index) == SQLITE_NULL
    }

    private func index(of column: String) throws -> Int32 {
        guard let index = columns[column] else {
            throw StoreError.database("no column \(column) in: \(String(cString: sqlite3_sql(statement)))")
        }
        return index
    }
}

/// A statement prepared once and kept for the connection's life.
private final class PreparedStatement {
    let handle: OpaquePointer
    /// Result column name → index.
    let columns: [String: Int32]
    /// For each parameter SQLite numbered (1, 2, …), the index of the value it takes: statements name their
    /// parameters `$1 … $n` as PostgreSQL does, and SQLite numbers named parameters in the order they first
    /// appear. Nil when that order is already 0, 1, 2, ….
    let valueIndexes: [Int]?

    init(_ handle: OpaquePointer) throws {
        self.handle = handle
        var columns: [String: Int32] = [:]
        for index in 0..<sqlite3_column_count(handle) {
            if let name = sqlite3_column_name(handle, index) {
                columns[String(cString: name)] = index
            }
        }
        self.columns = columns
        var valueIndexes: [Int] = []
        for parameter in 0..<sqlite3_bind_parameter_count(handle) {
            guard let name = sqlite3_bind_parameter_name(handle, parameter + 1) else {
                valueIndexes.append(Int(parameter))  // a plain `?`
                continue
            }
            guard let number = Int(String(cString: name).dropFirst()), number > 0 else {
                throw StoreError.database("parameter \(String(cString: name)) is not $n in: \(String(cString: sqlite3_sql(handle)))")
            }
            valueIndexes.append(number - 1)
        }
        self.valueIndexes = valueIndexes.enumerated().allSatisfy { $0.offset == $0.element } ? nil : valueIndexes
    }

    var parameterCount: Int32 { sqlite3_bind_parameter_count(handle) }
}

/// One SQLite handle and its prepared-statement cache; the only code that calls SQLite.
///
/// Not thread-safe by design: it is opened with SQLITE_OPEN_NOMUTEX because
/// `SQLiteReaderPool` lends each connection to one thread at a time, and a statement's
/// bind/step/reset sequence needs that exclusivity anyway — FULLMUTEX would only add
/// a second lock around every single call.
final class SQLiteConnection: SQLConnection {
    private let handle: OpaquePointer
    /// Keyed by SQL text; prepared once with SQLITE_PREPARE_PERSISTENT, finalized in deinit.
    private var statements: [String: PreparedStatement] = [:]
    /// The same statements found by the address of their SQL text's storage. The store's statements are constants,
    /// so each is one string object for the life of the process; hashing its few hundred bytes on every call was
    /// about 1.5 % of a sign-in, hashing an address is a few instructions. A hit is confirmed by comparing the
    /// strings, which for the same storage is one comparison of their bits.
    private var statementsByAddress: [UInt: (sql: String, statement: PreparedStatement)] = [:]
    let dialect = SQLDialect.sqlite

    /// Process-wide settings, made once before the first connection opens (SQLite refuses them afterwards).
    /// Neither is needed for correctness, so a refusal is ignored. The WAL-buffering VFS is registered after them:
    /// registering initializes SQLite.
    private static let processSettings: Int32 = {
        _ = bridge_sqlite_disable_memory_statistics()
        _ = bridge_sqlite_install_page_cache()
        return bridge_sqlite_register_wal_buffer_vfs()
    }()

    /// Write calls made to this connection's WAL file through the buffering VFS so far; nil without it, or while
    /// no WAL file is open.
    var bufferedWALWriteCalls: Int64? {
        var count: Int64 = 0
        return sqlite3_file_control(handle, "main", BRIDGE_SQLITE_FCNTL_WAL_WRITE_CALLS, &count) == SQLITE_OK ? count : nil
    }

    /// Opens (creating if needed) the database file and runs `setup` (pragmas). With `bufferingWAL`, the
    /// connection's WAL frames go through the buffering VFS (CSQLiteWALBuffer): one write system call per
    /// commit instead of two per frame. Only the one writer connection needs it; readers never write the WAL.
    /// Without `creating`, a missing file is an error rather than a new, empty database.
    init(path: String, setup: String, bufferingWAL: Bool = false, creating: Bool = true) throws {
        let vfsRegistration = Self.processSettings
        if bufferingWAL, vfsRegistration != SQLITE_OK {
            throw StoreError.database("cannot register SQLite's WAL-buffering VFS (error \(vfsRegistration))")
        }
        var opened: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | (creating ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &opened, flags, bufferingWAL ? bridge_sqlite_wal_buffer_vfs_name() : nil)
        guard rc == SQLITE_OK, let opened else {
            let message = opened.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(opened)
            throw StoreError.database("cannot open SQLite database '\(path)': \(message)")
        }
        if let failure = Self.execute(setup, on: opened) {
            sqlite3_close_v2(opened)
            throw StoreError.database("cannot configure SQLite database '\(path)': \(failure)")
        }
        handle = opened
    }

    deinit {
        sqlite3_wal_hook(handle, nil, nil)
        for statement in statements.values {
            sqlite3_finalize(statement.handle)
        }
        sqlite3_close_v2(handle)
    }

    /// Frames in the WAL after this connection's last commit (SQLite's WAL hook); 0 until `observeWALCommits`.
    private(set) var walFramesAfterLastCommit = 0
    /// Checkpoints this connection ran itself because a commit left the WAL at `walSelfCheckpointFrames` or more.
    private(set) var walSelfCheckpoints = 0
    private var walSelfCheckpointFrames = Int.max

    /// From now on SQLite reports the WAL's length after each commit of this connection (`walFramesAfterLastCommit`),
    /// and a commit that leaves `checkpointingAt` frames or more is followed by a PASSIVE checkpoint on this
    /// connection, as `wal_autocheckpoint` would (the two share SQLite's one WAL hook: this replaces it).
    func observeWALCommits(checkpointingAt frames: Int) {
        walSelfCheckpointFrames = frames
        sqlite3_wal_hook(handle, { context, database, schema, frames in
            // The hook runs inside this connection's COMMIT, on the thread running it; the connection owns the handle.
            let connection = Unmanaged<SQLiteConnection>.fromOpaque(context!).takeUnretainedValue()
            connection.walFramesAfterLastCommit = Int(frames)
            if Int(frames) >= connection.walSelfCheckpointFrames {
                connection.walSelfCheckpoints += 1
                _ = sqlite3_wal_checkpoint_v2(database, schema, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            }
            return SQLITE_OK
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Which of the connection's files `sync` flushes.
    enum File {
        case database, writeAheadLog
    }

    /// Flushes what was written to the file to the disk, as SQLite's own sync of it would (through its VFS:
    /// `fdatasync`). A file the connection has not opened (a WAL before the first read) is left alone.
    func sync(_ file: File) throws {
        var pointer: UnsafeMutablePointer<sqlite3_file>?
        let operation = file == .database ? SQLITE_FCNTL_FILE_POINTER : SQLITE_FCNTL_JOURNAL_POINTER
        guard sqlite3_file_control(handle, "main", operation, &pointer) == SQLITE_OK,
              let pointer, let methods = pointer.pointee.pMethods, let xSync = methods.pointee.xSync else { return }
        let rc = xSync(pointer, SQLITE_SYNC_NORMAL)
        guard rc == SQLITE_OK else { throw StoreError.database("cannot sync the \(file) file (SQLite error \(rc))") }
    }

    /// Copies this connection's whole database into the one `destination` has open, replacing its content, with
    /// SQLite's online backup in a single step: one read transaction here, so the copy is one consistent snapshot,
    /// and in WAL mode the writers of other connections and processes keep committing meanwhile.
    func copyDatabase(into destination: SQLiteConnection) throws {
        guard let backup = sqlite3_backup_init(destination.handle, "main", handle, "main") else {
            throw StoreError.database("cannot start the backup: \(String(cString: sqlite3_errmsg(destination.handle)))")
        }
        var step = sqlite3_backup_step(backup, -1)
        // Busy or locked only while another connection holds a lock the snapshot must wait for (a WAL recovery, a
        // checkpoint restarting the WAL): retried for up to 10 s.
        var retries = 0
        while step == SQLITE_BUSY || step == SQLITE_LOCKED, retries < 200 {
            sqlite3_sleep(50)
            retries += 1
            step = sqlite3_backup_step(backup, -1)
        }
        let finish = sqlite3_backup_finish(backup)
        guard step == SQLITE_DONE, finish == SQLITE_OK else {
            let code = step == SQLITE_DONE ? finish : step
            throw StoreError.database("the backup stopped: \(String(cString: sqlite3_errstr(code))) (SQLite code \(code))")
        }
    }

    /// True between BEGIN and COMMIT/ROLLBACK.
    var isInsideTransaction: Bool {
        sqlite3_get_autocommit(handle) == 0
    }

    /// Runs a statement (cached) and returns the number of rows it changed.
    @discardableResult
    func run(_ sql: String, _ values: [SQLValue]) throws -> Int {
        try withStatement(sql, values) { statement in
            while try step(statement.handle) {}
            return Int(sqlite3_changes(handle))
        }
    }

    /// The new row's id from `sqlite3_last_insert_rowid`: no result row to build (`dialect.returningID` is empty).
    func insertReturningID(_ sql: String, _ values: [SQLValue]) throws -> Int64? {
        try run(sql, values) == 1 ? lastInsertedRowID : nil
    }

    /// Rows inserted, updated or deleted through this connection since it opened (triggers and foreign-key actions
    /// included): unchanged across a call, the call wrote nothing.
    var totalChanges: Int64 {
        sqlite3_total_changes64(handle)
    }

    /// The rowid of the last row this connection inserted successfully.
    var lastInsertedRowID: Int64 {
        sqlite3_last_insert_rowid(handle)
    }

    /// Runs a query (cached) and decodes every row.
    func query<T>(_ sql: String, _ values: [SQLValue], _ decode: (any StoredRow) throws -> T) throws -> [T] {
        try withStatement(sql, values) { statement in
            var rows: [T] = []
            while try step(statement.handle) {
                rows.append(try decode(SQLiteRow(statement: statement.handle, columns: statement.columns)))
            }
            return rows
        }
    }

    /// Runs several `;`-separated statements without caching them (migrations).
    func executeScript(_ sql: String) throws {
        if let failure = Self.execute(sql, on: handle) {
            throw StoreError.database(failure)
        }
    }

    // MARK: - Statements

    private func withStatement<T>(_ sql: String, _ values: [SQLValue], _ body: (PreparedStatement) throws -> T) throws -> T {
        let statement = try preparedStatement(sql)
        // Not sqlite3_clear_bindings: `bind` sets every parameter before each run, and clearing freed the buffers
        // SQLite keeps for bound text, so that every run of a statement allocated them again.
        defer { sqlite3_reset(statement.handle) }
        try bind(values, to: statement)
        return try body(statement)
    }

    private func preparedStatement(_ sql: String) throws -> PreparedStatement {
        let address = sql.heapStorageAddress
        if let address, let entry = statementsByAddress[address], entry.sql == sql {
            return entry.statement
        }
        let statement = try preparedStatement(text: sql)
        if let address {
            // SQL built per call has a new address each time: keep the table bounded, the statements stay cached.
            if statementsByAddress.count >= 512 { statementsByAddress.removeAll(keepingCapacity: true) }
            statementsByAddress[address] = (sql, statement)
        }
        return statement
    }

    private func preparedStatement(text sql: String) throws -> PreparedStatement {
        if let cached = statements[sql] {
            return cached
        }
        var prepared: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &prepared, nil)
        guard rc == SQLITE_OK, let prepared else {
            sqlite3_finalize(prepared)
            throw error(rc, sql: sql)
        }
        let statement: PreparedStatement
        do {
            statement = try PreparedStatement(prepared)
        } catch {
            sqlite3_finalize(prepared)
            throw error
        }
        statements[sql] = statement
        return statement
    }

    private func bind(_ values: [SQLValue], to prepared: PreparedStatement) throws {
        let statement = prepared.handle
        let count = Int(prepared.parameterCount)
        for parameter in 0..<count {
            let valueIndex = prepared.valueIndexes?[parameter] ?? parameter
            guard valueIndex < values.count else {
                throw StoreError.database("\(values.count) values for parameter $\(valueIndex + 1) in: \(String(cString: sqlite3_sql(statement)))")
            }
            let index = Int32(parameter + 1)
            let rc = switch values[valueIndex] {
            case let .integer(number):
                sqlite3_bind_int64(statement, index, number)
            case let .text(string):
                Self.bindText(string, to: statement, at: index)
            case let .blob(bytes):
                Self.bindBlob(bytes, to: statement, at: index)
            case let .bool(flag):
                sqlite3_bind_int64(statement, index, flag ? 1 : 0)
            case .null:
                sqlite3_bind_null(statement, index)
            case .array:
                throw StoreError.invalidArgument("SQLite has no array values")
            }
            guard rc == SQLITE_OK else {
                throw error(rc, sql: String(cString: sqlite3_sql(statement)))
            }
        }
    }

    /// The string's UTF-8 with its length: passing the String as a C string copied it into a new array first.
    /// SQLITE_TRANSIENT: SQLite copies the bytes, which Swift lends only for this call.
    private static func bindText(_ string: String, to statement: OpaquePointer, at index: Int32) -> Int32 {
        var string = string
        return string.withUTF8 { bytes in
            // A nil pointer would bind NULL: an empty string stays an empty TEXT.
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return sqlite3_bind_text(statement, index, "", 0, transient) }
            return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                sqlite3_bind_text(statement, index, $0, Int32(bytes.count), transient)
            }
        }
    }

    private static func bindBlob(_ bytes: [UInt8], to statement: OpaquePointer, at index: Int32) -> Int32 {
        bytes.withUnsafeBytes { buffer in
            // A nil pointer would bind NULL: an empty value stays a (zero-length) BLOB.
            guard let base = buffer.baseAddress, !buffer.isEmpty else {
                return sqlite3_bind_zeroblob(statement, index, 0)
            }
            return sqlite3_bind_blob64(statement, index, base, sqlite3_uint64(buffer.count), transient)
        }
    }

    /// True when a row is ready, false when done.
    private func step(_ statement: OpaquePointer) throws -> Bool {
        let rc = sqlite3_step(statement)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw error(rc, sql: String(cString: sqlite3_sql(statement)))
        }
    }

    // MARK: - Errors

    private func error(_ rc: Int32, sql: String) -> StoreError {
        let message = String(cString: sqlite3_errmsg(handle))
        if rc & 0xFF == SQLITE_CONSTRAINT {
            return .conflict(message)
        }
        return .database("\(message) (SQLite code \(rc)) in: \(sql)")
    }

    /// sqlite3_exec; returns the error message, or nil on success.
    private static func execute(_ sql: String, on handle: OpaquePointer) -> String? {
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &message)
        guard rc != SQLITE_OK else { return nil }
        defer { sqlite3_free(message) }
        let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
        return "\(text) (SQLite code \(rc))"
    }

    private static var transient: sqlite3_destructor_type {
        unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    }
}
