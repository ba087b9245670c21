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
        case .array(.integer, _): 1016  // int8[]
        case .array(.text, _): 1009  // text[]
        case .array(.bool, _): 1000  // bool[]
        }
    }

    /// Appends the binary wire form to `buffer`; false for NULL, which has none.
    fileprivate func appendBinary(to buffer: inout [UInt8]) -> Bool {
        switch self {
        case let .integer(value): withUnsafeBytes(of: value.bigEndian) { buffer.append(contentsOf: $0) }
        case let .text(string): buffer.append(contentsOf: string.utf8)
        case let .blob(bytes): buffer.append(contentsOf: bytes)
        case let .bool(flag): buffer.append(flag ? 1 : 0)
        case .null: return false
        case let .array(element, elements): Self.appendArray(of: element, elements, to: &buffer)
        }
        return true
    }

    /// PostgreSQL's binary array: dimensions, a has-NULLs flag, the element type, then each element's length (-1 for
    /// NULL) and bytes.
    private static func appendArray(of element: SQLArrayElement, _ elements: [SQLValue], to buffer: inout [UInt8]) {
        func append(_ value: Int32) { withUnsafeBytes(of: value.bigEndian) { buffer.append(contentsOf: $0) } }
        let hasNulls = elements.contains { if case .null = $0 { true } else { false } }
        append(1)
        append(hasNulls ? 1 : 0)
        switch element {
        case .integer: append(20)
        case .text: append(25)
        case .bool: append(16)
        }
        append(Int32(elements.count))
        append(1)  // the lower bound
        for value in elements {
            let lengthAt = buffer.count
            append(-1)
            guard value.appendBinary(to: &buffer) else { continue }
            withUnsafeBytes(of: Int32(buffer.count - lengthAt - 4).bigEndian) {
                buffer.replaceSubrange(lengthAt..<lengthAt + 4, with: $0)
            }
        }
    }
}

/// One row of a result, read by column name; valid only inside the decode closure.
struct PostgresRow: StoredRow {
    fileprivate let result: OpaquePointer
    fileprivate let row: Int32

    private func column(_ name: String) throws -> Int32 {
        // The names asked for are the result's own, as PostgreSQL spells them (lower case): compared as they are.
        // PQfnumber folds the case of a copy of the name at every call, a malloc and a free for each column read.
        var name = name
        let exact = name.withUTF8 { wanted -> Int32? in
            for index in 0..<PQnfields(result) {
                guard let field = PQfname(result, index), strlen(field) == wanted.count,
                      wanted.isEmpty || memcmp(field, wanted.baseAddress!, wanted.count) == 0 else { continue }
                return index
            }
            return nil
        }
        if let exact { return exact }
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
    /// Not the database's failure: a statement sent with a `ChangeRequirement` changed another number of rows,
    /// and this is the requirement's own error, for the caller.
    var refusal: (any Error)? = nil
}

/// One libpq connection and its prepared statements; the only code that calls libpq.
///
/// Not thread-safe: `PostgresConnectionPool` lends it to one thread at a time.
final class PostgresConnection {
    private let handle: OpaquePointer
    /// Statement names by SQL text and parameter types; they live as long as the session.
    private var prepared: [StatementKey: String] = [:]

    private struct StatementKey: Hashable {
        let sql: String
        let types: [Oid]
    }
    /// The same names by where the SQL text is stored (`String.heapStorageAddress`): hashing a statement's whole text
    /// for every run cost a sign-in about 11,000 instructions. Bounded, as SQL built per call has a new address each time.
    private var preparedByAddress: [UInt: (key: StatementKey, name: String)] = [:]
    /// A BEGIN that goes out with the next statement (`begin(_:)`).
    private var pendingBegin: String?
    /// A command sent in pipeline mode whose result is not read yet: what it must change, its number in
    /// `statementsSent`, and what keeps its rows for a finisher (`queryBeforeCommit`).
    private typealias QueuedCommand = (requirement: ChangeRequirement?, number: Int, rows: ((OpaquePointer) -> Void)?)
    /// Commands sent without waiting (`send`, `queryBeforeCommit`), in order.
    private var queued: [QueuedCommand] = []
    /// What runs with the rows of queries sent by `queryBeforeCommit`, in the order those went out, before the
    /// COMMIT at the latest.
    private var finishers: [() throws -> Void] = []
    /// Statements sent since the last `begin`, the first of them with the BEGIN.
    private(set) var statementsInTransaction = 0
    /// Statements sent on this connection so far: each one's number, in the order they went out.
    private(set) var statementsSent = 0
    /// The number (in `statementsSent`) of the last statement whose result said it changed or returned rows: a
    /// write that threw with no statement of its own past this mark, and none queued, changed nothing.
    private(set) var lastStatementWithRows = 0
    /// The number of the last statement that changed other than the number of rows its `ChangeRequirement` asked.
    private(set) var lastMissedRequirement = 0

    /// Finishers (`queryBeforeCommit`) that have not run yet.
    var waitingFinishers: Int { finishers.count }
    /// True while statements sent without waiting have not been answered yet.
    var hasUnansweredStatements: Bool { !queued.isEmpty }
    /// The failure behind the last error thrown, so the store can tell a serialization
    /// failure (retry) or a lost connection (discard) from any other error.
    private(set) var lastFailure: PostgresFailure?
    /// Set when a pipeline did not end at its sync point. libpq may still call the connection OK (the server's
    /// FATAL was read, the socket's close not yet), but whatever it reads next would answer other statements: nothing
    /// more is sent on it, and the pool closes it.
    private var lostItsPlace = false

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

    /// False once libpq has seen the connection break, or a pipeline on it ended without its sync point.
    var isUsable: Bool {
        !lostItsPlace && PQstatus(handle) == CONNECTION_OK
    }

    /// Recorded as `check` records a failure, so that the unit of work and the group commit see a lost connection.
    private func requireItsPlace() throws(PostgresFailure) {
        guard lostItsPlace else { return }
        let failure = PostgresFailure(sqlState: nil, message: "the connection lost its place in a pipeline", connectionLost: true)
        lastFailure = lastFailure ?? failure
        throw failure
    }

    /// TLS to a server on this machine (a loopback address, or `localhost`): every round trip encrypted and
    /// decrypted on both ends, where the server's Unix socket needs neither.
    var encryptsLoopback: Bool {
        guard PQsslInUse(handle) == 1 else { return false }
        let address = PQhostaddr(handle).map { String(cString: $0) } ?? ""
        return Self.isLoopback(address.isEmpty ? PQhost(handle).map { String(cString: $0) } ?? "" : address)
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
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
        try requireItsPlace()
        let result = PQexec(handle, sql)
        defer { PQclear(result) }
        try check(result)
    }

    /// Opens a transaction with `sql` (a BEGIN) sent together with the next statement, in one round trip
    /// (libpq's pipeline mode): a sign-in is a handful of statements, and each round trip costs both processes
    /// a wake-up. Nothing is sent when no statement follows before `commit()`.
    func begin(_ sql: String) {
        pendingBegin = sql
        statementsInTransaction = 0
        finishers.removeAll(keepingCapacity: true)
    }

    /// Commits what `begin` opened, together with the statements `send` queued; nothing to do when no statement
    /// ran since.
    func commit() throws(PostgresFailure) {
        if pendingBegin != nil {
            pendingBegin = nil
            return
        }
        // A queued statement that must change some number of rows is checked, and the finishers run, before the
        // COMMIT goes out.
        try settle()
        guard !queued.isEmpty else { return try execute("COMMIT") }
        let commit = try statementName("COMMIT", [])
        try queue { PQsendQueryPrepared(handle, commit, 0, nil, nil, nil, 0) }
        try flushChecked()
    }

    /// Ends a unit of work that failed: forgets a BEGIN not sent yet, and reads away the results of statements
    /// sent but not waited for (the transaction is rolled back afterwards).
    func abandonUnitOfWork() {
        pendingBegin = nil
        finishers.removeAll(keepingCapacity: true)
        if !queued.isEmpty, let (last, _) = try? flush() { PQclear(last) }
    }

    /// Runs a statement and returns how many rows it changed.
    @discardableResult
    func run(_ sql: String, _ values: [SQLValue] = []) throws(PostgresFailure) -> Int {
        try withResult(sql, values, Self.changedRows)
    }

    private static func changedRows(_ result: OpaquePointer) -> Int {
        Int(String(cString: PQcmdTuples(result))) ?? 0
    }

    /// Sends a statement inside the transaction without waiting for it: it goes out with the next statement
    /// that is waited for, or with the COMMIT, and a failure is reported there (the transaction then fails).
    /// For statements whose only outcome is success or failure, or the number of rows they change (`requiring`;
    /// the COMMIT then waits for that check).
    func send(_ sql: String, _ values: [SQLValue] = [], requiring: ChangeRequirement? = nil) throws(PostgresFailure) {
        // Outside a transaction nothing would flush the queue: wait for it instead.
        guard pendingBegin != nil || !queued.isEmpty || isInsideTransaction else {
            try meet(requiring, changed: try run(sql, values))
            return
        }
        let name = try statementName(sql, values)
        statementsInTransaction += 1
        statementsSent += 1
        try withParameters(values) { pointers, lengths, formats throws(PostgresFailure) in
            try queue(requiring) { PQsendQueryPrepared(handle, name, Int32(values.count), pointers, lengths, formats, 1) }
        }
    }

    /// Sends a query inside the transaction without waiting for it, like `send`; `finish` gets its rows once they
    /// were read (with the next statement that is waited for, or at `settle`, which the COMMIT calls), after the
    /// finishers of earlier such queries. Outside a transaction it waits, and `finish` runs at once. A finisher's
    /// error fails the transaction: it is thrown as a `PostgresFailure` whose `refusal` it is.
    func queryBeforeCommit<T>(_ sql: String, _ values: [SQLValue], _ decode: @escaping (PostgresRow) -> T,
                              finishing finish: @escaping ([T]) throws -> Void) throws(PostgresFailure) {
        guard pendingBegin != nil || !queued.isEmpty || isInsideTransaction else {
            let rows = try query(sql, values, decode)
            return try runFinisher { try finish(rows) }
        }
        let name = try statementName(sql, values)
        statementsInTransaction += 1
        statementsSent += 1
        var read: [T]?
        try withParameters(values) { pointers, lengths, formats throws(PostgresFailure) in
            try queue(rows: { result in read = (0..<PQntuples(result)).map { decode(PostgresRow(result: result, row: $0)) } }) {
                PQsendQueryPrepared(handle, name, Int32(values.count), pointers, lengths, formats, 1)
            }
        }
        finishers.append {
            guard let rows = read else { throw StoreError.database("a query's rows were not read before its finisher") }
            try finish(rows)
        }
    }

    /// Reads the queued results that a requirement or a finisher waits for (one round trip), then runs the
    /// finishers in order, reading again for one whose query a finisher before it sent.
    func settle() throws(PostgresFailure) {
        while true {
            if queued.contains(where: { $0.requirement != nil || $0.rows != nil }) { try flushChecked() }
            guard !finishers.isEmpty else { return }
            let next = finishers.removeFirst()
            try runFinisher(next)
        }
    }

    private func runFinisher(_ finisher: () throws -> Void) throws(PostgresFailure) {
        do {
            try finisher()
        } catch {
            let failure = error as? PostgresFailure
                ?? PostgresFailure(sqlState: nil, message: "a finisher failed", connectionLost: !isUsable, refusal: error)
            // Recorded as a failed statement is, so that a group commit does not take it for a later write's refusal.
            lastFailure = lastFailure ?? failure
            throw failure
        }
    }

    private func meet(_ requirement: ChangeRequirement?, changed: Int, number: Int = 0) throws(PostgresFailure) {
        guard let requirement, changed != requirement.rows else { return }
        lastMissedRequirement = max(lastMissedRequirement, number)
        throw PostgresFailure(sqlState: nil, message: "a statement changed \(changed) rows, not \(requirement.rows)",
                              connectionLost: false, refusal: requirement.refusal)
    }

    /// Runs a statement and decodes every row it returned.
    func query<T>(_ sql: String, _ values: [SQLValue] = [], _ decode: (PostgresRow) -> T) throws(PostgresFailure) -> [T] {
        try withResult(sql, values) { result in
            (0..<PQntuples(result)).map { decode(PostgresRow(result: result, row: $0)) }
        }
    }

    private func withResult<T>(_ sql: String, _ values: [SQLValue], _ body: (OpaquePointer) -> T) throws(PostgresFailure) -> T {
        try requireItsPlace()
        let name = try statementName(sql, values)
        statementsInTransaction += 1
        statementsSent += 1
        let number = statementsSent
        let result = try withParameters(values) { pointers, lengths, formats throws(PostgresFailure) -> OpaquePointer? in
            guard pendingBegin != nil || !queued.isEmpty else {
                let result = PQexecPrepared(handle, name, Int32(values.count), pointers, lengths, formats, 1)
                if let result { noteRows(of: result, number: number) }
                return result
            }
            try queue { PQsendQueryPrepared(handle, name, Int32(values.count), pointers, lengths, formats, 1) }
            return try flush().result
        }
        defer { PQclear(result) }
        try check(result)
        return body(result!)
    }

    /// Calls `body` with the values in libpq's binary form: all of them in one buffer, so nothing needs freeing;
    /// a NULL is a nil pointer, an empty value is not (the buffer never is empty: a spare byte ends it).
    private func withParameters<T>(
        _ values: [SQLValue],
        _ body: (UnsafePointer<UnsafePointer<CChar>?>?, [Int32], [Int32]) throws(PostgresFailure) -> T
    ) throws(PostgresFailure) -> T {
        var bytes: [UInt8] = []
        var offsets: [Int?] = []
        var lengths: [Int32] = []
        offsets.reserveCapacity(values.count)
        lengths.reserveCapacity(values.count)
        for value in values {
            let start = bytes.count
            offsets.append(value.appendBinary(to: &bytes) ? start : nil)
            lengths.append(Int32(bytes.count - start))
        }
        bytes.append(0)
        let formats = [Int32](repeating: 1, count: values.count)
        return try bytes.withUnsafeBufferPointer { buffer throws(PostgresFailure) in
            let base = UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self)
            let pointers: [UnsafePointer<CChar>?] = offsets.map { $0.map { base + $0 } }
            return try pointers.withUnsafeBufferPointer { valuePointers throws(PostgresFailure) in
                try body(valuePointers.baseAddress, lengths, formats)
            }
        }
    }

    /// Queues one command in the pipeline (entering it, with the pending BEGIN first, if need be).
    private func queue(_ requirement: ChangeRequirement? = nil, rows: ((OpaquePointer) -> Void)? = nil,
                       _ sendCommand: () -> Int32) throws(PostgresFailure) {
        try requireItsPlace()
        // BEGIN and COMMIT are prepared too (the server then parses neither again); preparing one waits for the
        // server, so the BEGIN's name is had before the pipeline starts.
        let beginText = pendingBegin
        pendingBegin = nil
        let begin = try beginText.map { sql throws(PostgresFailure) in try statementName(sql, []) }
        if queued.isEmpty {
            guard PQenterPipelineMode(handle) == 1 else { try lostConnection() }
        }
        if let begin {
            guard PQsendQueryPrepared(handle, begin, 0, nil, nil, nil, 0) == 1 else { try lostConnection() }
            queued.append((nil, 0, nil))
        }
        guard sendCommand() == 1 else { try lostConnection() }
        queued.append((requirement, statementsSent, rows))
    }

    private func noteRows(of result: OpaquePointer, number: Int) {
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK, Self.changedRows(result) > 0 else { return }
        lastStatementWithRows = max(lastStatementWithRows, number)
    }

    /// Sends the queued commands, waits for every result and leaves pipeline mode; returns the last command's
    /// result (the caller clears it) and requirement once every earlier one succeeded and changed what it had to,
    /// else throws the first failure (the database ran no command after a failed one; after a refusal it did).
    private func flush() throws(PostgresFailure) -> (result: OpaquePointer, command: QueuedCommand) {
        // The queue's buffer is handed back once read: a batch queues dozens of statements, which a new array grew
        // into again, reallocating, at every round trip.
        var requirements: [QueuedCommand] = []
        swap(&requirements, &queued)
        defer {
            if queued.isEmpty {
                requirements.removeAll(keepingCapacity: true)
                swap(&requirements, &queued)
            }
        }
        let expected = requirements.count
        var results: [OpaquePointer] = []
        results.reserveCapacity(expected)
        // Each command's result is followed by a NULL; the sync point ends the pipeline. A NULL where a result
        // should be means the connection is gone.
        var answered = PQpipelineSync(handle) == 1
        while answered, results.count < expected {
            guard let result = PQgetResult(handle) else { answered = false; break }
            results.append(result)
            if let unexpected = PQgetResult(handle) {
                PQclear(unexpected)
                answered = false
            }
        }
        var synced = false
        if answered, let sync = PQgetResult(handle) {
            synced = PQresultStatus(sync) == PGRES_PIPELINE_SYNC
            // An error in the sync's place: the server ended the session (shut down, or the backend was terminated)
            // after it had answered every command, so the answers stand (a COMMIT answered has committed).
            answered = synced || PQresultStatus(sync) == PGRES_FATAL_ERROR
            PQclear(sync)
        } else {
            answered = false
        }
        if !(PQexitPipelineMode(handle) == 1 && synced) {
            lostItsPlace = true
        }
        guard answered, let last = results.last else {
            results.forEach { PQclear($0) }
            try lostConnection()
        }
        // Before any failure is thrown: the statements after a refusal ran all the same.
        for (index, result) in results.enumerated() { noteRows(of: result, number: requirements[index].number) }
        for (index, result) in results.dropLast().enumerated() {
            do {
                try check(result)
                try meet(requirements[index].requirement, changed: Self.changedRows(result), number: requirements[index].number)
                requirements[index].rows?(result)
            } catch {
                results[index...].forEach { PQclear($0) }
                throw error
            }
            PQclear(result)
        }
        return (last, requirements[expected - 1])
    }

    /// `flush` for queued commands whose last result only needs checking (and keeping, for a finisher).
    private func flushChecked() throws(PostgresFailure) {
        let (last, command) = try flush()
        defer { PQclear(last) }
        try check(last)
        try meet(command.requirement, changed: Self.changedRows(last), number: command.number)
        command.rows?(last)
    }

    /// The failure of a connection that broke mid-pipeline, recorded as `check` records one.
    private func lostConnection() throws(PostgresFailure) -> Never {
        lostItsPlace = true
        let failure = PostgresFailure(sqlState: nil, message: Self.trimmed(PQerrorMessage(handle)), connectionLost: !isUsable)
        lastFailure = lastFailure ?? failure
        throw failure
    }

    /// Prepares `sql` once per connection (and per parameter types).
    private func statementName(_ sql: String, _ values: [SQLValue]) throws(PostgresFailure) -> String {
        let types = values.map(\.typeOID)
        let address = sql.heapStorageAddress
        if let address, let entry = preparedByAddress[address], entry.key.types == types, entry.key.sql == sql {
            return entry.name
        }
        let key = StatementKey(sql: sql, types: types)
        if let name = prepared[key] {
            if let address { remember(name, for: key, at: address) }
            return name
        }
        let name = "s\(prepared.count + 1)"
        if !queued.isEmpty {  // libpq waits for nothing in pipeline mode: the queue goes out first
            try flushChecked()
        }
        try requireItsPlace()
        let result = PQprepare(handle, name, sql, Int32(types.count), types)
        defer { PQclear(result) }
        try check(result)
        prepared[key] = name
        if let address { remember(name, for: key, at: address) }
        return name
    }

    private func remember(_ name: String, for key: StatementKey, at address: UInt) {
        if preparedByAddress.count >= 512 { preparedByAddress.removeAll(keepingCapacity: true) }
        preparedByAddress[address] = (key, name)
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
