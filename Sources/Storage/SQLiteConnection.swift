import CSQLite
import CSQLiteWALBuffer

/// A value bound to a `?` parameter.
enum SQLiteValue {
    case integer(Int64)
    case text(String)
    case blob([UInt8])
    case null
}

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

/// One SQLite handle and its prepared-statement cache; the only code that calls SQLite.
///
/// Not thread-safe by design: it is opened with SQLITE_OPEN_NOMUTEX because
/// `ConnectionPool` lends each connection to one thread at a time, and a statement's
/// bind/step/reset sequence needs that exclusivity anyway — FULLMUTEX would only add
/// a second lock around every single call.
final class SQLiteConnection {
    private let handle: OpaquePointer
    /// Keyed by SQL text; prepared once with SQLITE_PREPARE_PERSISTENT, finalized in deinit.
    private var statements: [String: OpaquePointer] = [:]
    /// Result column name → index, per cached statement.
    private var columnIndexes: [OpaquePointer: [String: Int32]] = [:]

    /// Process-wide settings, made once before the first connection opens (SQLite refuses them afterwards).
    /// The WAL-buffering VFS is registered after them: registering initializes SQLite.
    private static let processSettings: Int32 = {
        _ = bridge_sqlite_disable_memory_statistics()
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
    init(path: String, setup: String, bufferingWAL: Bool = false) throws {
        let vfsRegistration = Self.processSettings
        if bufferingWAL, vfsRegistration != SQLITE_OK {
            throw StoreError.database("cannot register SQLite's WAL-buffering VFS (error \(vfsRegistration))")
        }
        var opened: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
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
        for statement in statements.values {
            sqlite3_finalize(statement)
        }
        sqlite3_close_v2(handle)
    }

    /// True between BEGIN and COMMIT/ROLLBACK.
    var isInsideTransaction: Bool {
        sqlite3_get_autocommit(handle) == 0
    }

    /// Runs a statement (cached) and returns the number of rows it changed.
    @discardableResult
    func run(_ sql: String, _ values: [SQLiteValue] = []) throws -> Int {
        try withStatement(sql, values) { statement in
            while try step(statement) {}
            return Int(sqlite3_changes(handle))
        }
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
    func query<T>(_ sql: String, _ values: [SQLiteValue] = [], _ decode: (SQLiteRow) throws -> T) throws -> [T] {
        try withStatement(sql, values) { statement in
            var rows: [T] = []
            while try step(statement) {
                rows.append(try decode(SQLiteRow(statement: statement, columns: columnIndexes[statement] ?? [:])))
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

    private func withStatement<T>(_ sql: String, _ values: [SQLiteValue], _ body: (OpaquePointer) throws -> T) throws -> T {
        let statement = try preparedStatement(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        try bind(values, to: statement)
        return try body(statement)
    }

    private func preparedStatement(_ sql: String) throws -> OpaquePointer {
        if let cached = statements[sql] {
            return cached
        }
        var prepared: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &prepared, nil)
        guard rc == SQLITE_OK, let prepared else {
            sqlite3_finalize(prepared)
            throw error(rc, sql: sql)
        }
        statements[sql] = prepared
        columnIndexes[prepared] = Self.columnIndexes(of: prepared)
        return prepared
    }

    private static func columnIndexes(of statement: OpaquePointer) -> [String: Int32] {
        var indexes: [String: Int32] = [:]
        for index in 0..<sqlite3_column_count(statement) {
            if let name = sqlite3_column_name(statement, index) {
                indexes[String(cString: name)] = index
            }
        }
        return indexes
    }

    private func bind(_ values: [SQLiteValue], to statement: OpaquePointer) throws {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let rc = switch value {
            case let .integer(number):
                sqlite3_bind_int64(statement, index, number)
            case let .text(string):
                // SQLITE_TRANSIENT: SQLite copies the bytes, the C string Swift lends
                // us only lives for this call.
                sqlite3_bind_text(statement, index, string, -1, Self.transient)
            case let .blob(bytes):
                Self.bindBlob(bytes, to: statement, at: index)
            case .null:
                sqlite3_bind_null(statement, index)
            }
            guard rc == SQLITE_OK else {
                throw error(rc, sql: String(cString: sqlite3_sql(statement)))
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
