import CLibPQ
import Foundation

// How a value travels: in binary format, out of band from the SQL text.
extension SQLValue {
    /// The type OID the statement is prepared with; 0 lets the server infer it (for NULL).
    fileprivate var typeOID: Oid {
        switch self {
        case .integer: 20  // int8
        case .text: 25  // text
        case .blob: 17  // bytea
        case .bool: 16  // bool
        case .null: 0
        }
    }

    /// The binary wire form, or nil for NULL.
    fileprivate var binary: [UInt8]? {
        switch self {
        case let .integer(value): withUnsafeBytes(of: value.bigEndian) { Array($0) }
        case let .text(string): Array(string.utf8)
        case let .blob(bytes): bytes
        case let .bool(flag): [flag ? 1 : 0]
        case .null: nil
        }
    }
}

/// One row of a result, read by column name; valid only inside the decode closure.
struct PostgresRow: StoredRow {
    fileprivate let result: OpaquePointer
    fileprivate let row: Int32

    private func column(_ name: String) throws -> Int32 {
        let index = PQfnumber(result, name)
        guard index >= 0 else { throw StoreError.database("no column \(name) in the result") }
        return index
    }

    /// Raw binary bytes of the column; nil for NULL.
    private func bytes(_ name: String) throws -> UnsafeRawBufferPointer? {
        let index = try column(name)
        guard PQgetisnull(result, row, index) == 0 else { return nil }
        guard let value = PQgetvalue(result, row, index) else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: value, count: Int(PQgetlength(result, row, index)))
    }

    /// bool (as 0/1), int2, int4 or int8 (binary big-endian).
    func integer(_ name: String) throws -> Int64? {
        guard let raw = try bytes(name) else { return nil }
        let unsigned = raw.reduce(UInt64(0)) { ($0 << 8) | UInt64($1) }
        switch raw.count {
        case 1: return Int64(unsigned)
        case 2: return Int64(Int16(truncatingIfNeeded: unsigned))
        case 4: return Int64(Int32(truncatingIfNeeded: unsigned))
        default: return Int64(bitPattern: unsigned)
        }
    }

    func text(_ name: String) throws -> String? {
        try bytes(name).map { String(decoding: $0, as: UTF8.self) }
    }

    func blob(_ name: String) throws -> [UInt8]? {
        try bytes(name).map { Array($0) }
    }

    /// For tests and tools reading a count: 0 for NULL or a missing column.
    func int64(_ name: String) -> Int64 {
        ((try? integer(name)) ?? nil) ?? 0
    }
}

/// Why a libpq call failed: the server's SQLSTATE when it answered, and whether the
/// connection itself is gone (then it must be discarded, never reused).
struct PostgresFailure: Error {
    let sqlState: String?
    let message: String
    let connectionLost: Bool
}

/// One libpq connection and its prepared statements; the only code that calls libpq.
///
/// Not thread-safe: `PostgresConnectionPool` lends it to one thread at a time.
final class PostgresConnection {
    private let handle: OpaquePointer
    /// Statement names by SQL text and parameter types; they live as long as the session.
    private var prepared: [String: String] = [:]
    /// The failure behind the last error thrown, so the store can tell a serialization
    /// failure (retry) or a lost connection (discard) from any other error.
    private(set) var lastFailure: PostgresFailure?

    /// Connects with a libpq connection string or `postgres://` URI. libpq itself reads
    /// the PG* environment variables and the password file for what the URI leaves out.
    /// `defaults` (e.g. `connect_timeout`) apply unless the URI sets them.
    init(conninfo: String, defaults: [String: String]) throws(PostgresFailure) {
        let pairs = defaults.sorted { $0.key < $1.key } + [("dbname", conninfo)]
        let keywords = pairs.map { strdup($0.0) } + [nil]
        let values = pairs.map { strdup($0.1) } + [nil]
        defer { (keywords + values).forEach { free($0) } }
        let connection = keywords.map { UnsafePointer($0) }.withUnsafeBufferPointer { keys in
            values.map { UnsafePointer($0) }.withUnsafeBufferPointer { vals in
                // expand_dbname: the dbname entry is parsed as a URI; entries before it are overridden by it.
                PQconnectdbParams(keys.baseAddress, vals.baseAddress, 1)
            }
        }
        guard let connection else {
            throw PostgresFailure(sqlState: nil, message: "out of memory", connectionLost: true)
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = Self.trimmed(PQerrorMessage(connection))
            PQfinish(connection)
            throw PostgresFailure(sqlState: nil, message: message, connectionLost: true)
        }
        // Notices (e.g. "relation already exists, skipping") are not errors: keep them off stderr.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        handle = connection
    }

    deinit {
        PQfinish(handle)
    }

    /// False once libpq has seen the connection break.
    var isUsable: Bool {
        PQstatus(handle) == CONNECTION_OK
    }

    /// True inside BEGIN … COMMIT (also when the transaction is aborted).
    var isInsideTransaction: Bool {
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE
    }

    /// Checks a connection string or URI the way libpq will read it; returns its keywords
    /// and values, or the reason it is malformed.
    static func parseConnectionInfo(_ conninfo: String) -> Result<[String: String], PostgresFailure> {
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(conninfo, &error) else {
            let message = error.map { trimmed($0) } ?? "out of memory"
            PQfreemem(error)
            return .failure(PostgresFailure(sqlState: nil, message: message, connectionLost: false))
        }
        defer { PQconninfoFree(options) }
        var parsed: [String: String] = [:]
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val {
                parsed[String(cString: keyword)] = String(cString: value)
            }
            option += 1
        }
        return .success(parsed)
    }

    // MARK: - Statements

    /// Runs one or more `;`-separated statements without parameters (BEGIN, migrations).
    func execute(_ sql: String) throws(PostgresFailure) {
        let result = PQexec(handle, sql)
        defer { PQclear(result) }
        try check(result)
    }

    /// Runs a statement and returns how many rows it changed.
    @discardableResult
    func run(_ sql: String, _ values: [SQLValue] = []) throws(PostgresFailure) -> Int {
        try withResult(sql, values) { result in Int(String(cString: PQcmdTuples(result))) ?? 0 }
    }

    /// Runs a statement and decodes every row it returned.
    func query<T>(_ sql: String, _ values: [SQLValue] = [], _ decode: (PostgresRow) -> T) throws(PostgresFailure) -> [T] {
        try withResult(sql, values) { result in
            (0..<PQntuples(result)).map { decode(PostgresRow(result: result, row: $0)) }
        }
    }

    private func withResult<T>(_ sql: String, _ values: [SQLValue], _ body: (OpaquePointer) -> T) throws(PostgresFailure) -> T {
        let name = try statementName(sql, values)
        let encoded = values.map(\.binary)
        let pointers: [UnsafeMutablePointer<CChar>?] = encoded.map { bytes in
            bytes.map { bytes in
                let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: max(bytes.count, 1))
                bytes.withUnsafeBytes { source in
                    if let start = source.baseAddress {
                        UnsafeMutableRawPointer(buffer).copyMemory(from: start, byteCount: source.count)
                    }
                }
                return buffer
            }
        }
        let lengths = encoded.map { Int32($0?.count ?? 0) }
        let formats = [Int32](repeating: 1, count: values.count)
        let result = pointers.map { UnsafePointer($0) }.withUnsafeBufferPointer { valuePointers in
            PQexecPrepared(handle, name, Int32(values.count), valuePointers.baseAddress, lengths, formats, 1)
        }
        defer { PQclear(result) }
        try check(result)
        return body(result!)
    }

    /// Prepares `sql` once per connection (and per parameter types).
    private func statementName(_ sql: String, _ values: [SQLValue]) throws(PostgresFailure) -> String {
        let types = values.map(\.typeOID)
        let key = types.map(String.init).joined(separator: ",") + "|" + sql
        if let name = prepared[key] {
            return name
        }
        let name = "s\(prepared.count + 1)"
        let result = PQprepare(handle, name, sql, Int32(types.count), types)
        defer { PQclear(result) }
        try check(result)
        prepared[key] = name
        return name
    }

    private func check(_ result: OpaquePointer?) throws(PostgresFailure) {
        let status = result.map(PQresultStatus) ?? PGRES_FATAL_ERROR
        guard status != PGRES_COMMAND_OK, status != PGRES_TUPLES_OK else { return }
        let sqlState = result.flatMap { PQresultErrorField($0, Int32(UInt8(ascii: "C"))) }.map { String(cString: $0) }
        let message = result.flatMap { PQresultErrorField($0, Int32(UInt8(ascii: "M"))) }.map { String(cString: $0) }
            ?? Self.trimmed(PQerrorMessage(handle))
        let failure = PostgresFailure(sqlState: sqlState, message: message, connectionLost: !isUsable)
        // The first failure is the cause; later ones in the same transaction only say it is aborted.
        lastFailure = lastFailure ?? failure
        throw failure
    }

    /// Forgets the last failure before a new unit of work.
    func clearFailure() {
        lastFailure = nil
    }

    private static func trimmed(_ message: UnsafePointer<CChar>?) -> String {
        message.map { String(cString: $0).trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
    }
}
