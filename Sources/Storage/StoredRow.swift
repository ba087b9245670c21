import Foundation

/// One result row as a backend hands it over, read by column name so that a query can
/// list its columns in any order.
package protocol StoredRow {
    /// Nil for NULL. Throws when the result has no column of that name.
    func integer(_ column: String) throws -> Int64?
    /// Nil for NULL.
    func text(_ column: String) throws -> String?
    /// Nil for NULL; a zero-length value is an empty array.
    func blob(_ column: String) throws -> [UInt8]?
}

extension StoredRow {
    func requiredInteger(_ column: String) throws -> Int64 {
        guard let value = try integer(column) else { throw StoreError.database("column \(column) is NULL") }
        return value
    }

    func requiredText(_ column: String) throws -> String {
        guard let value = try text(column) else { throw StoreError.database("column \(column) is NULL") }
        return value
    }

    func requiredBlob(_ column: String) throws -> [UInt8] {
        try blob(column) ?? []
    }

    /// 0/1.
    func bool(_ column: String) throws -> Bool {
        try requiredInteger(column) != 0
    }

    func date(_ column: String) throws -> Date {
        StoredTime.date(fromUnixSeconds: try requiredInteger(column))
    }

    func optionalDate(_ column: String) throws -> Date? {
        try integer(column).map(StoredTime.date(fromUnixSeconds:))
    }
}

/// A `StoredRow` whose columns were selected under a prefix (`user_email`), so that a
/// join can select two tables' columns of the same name.
struct PrefixedRow: StoredRow {
    let row: any StoredRow
    let prefix: String

    func integer(_ column: String) throws -> Int64? { try row.integer(prefix + column) }
    func text(_ column: String) throws -> String? { try row.text(prefix + column) }
    func blob(_ column: String) throws -> [UInt8]? { try row.blob(prefix + column) }
}

/// The stored columns of one table and how a row of them becomes a model value — the one
/// place that knows both, shared by every backend.
package struct TableMapping<Model>: Sendable {
    package let table: String
    package let columns: [String]
    /// `a, b, …` for `RETURNING` and single-table selects; joined once, not on every statement.
    package let columnList: String
    /// `SELECT a, b, … FROM table`, for single-table reads.
    package let selectFrom: String
    private let decoder: @Sendable (any StoredRow) throws -> Model

    init(table: String, columns: [String], decoder: @escaping @Sendable (any StoredRow) throws -> Model) {
        self.table = table
        self.columns = columns
        self.columnList = columns.joined(separator: ", ")
        self.selectFrom = "SELECT \(columnList) FROM \(table)"
        self.decoder = decoder
    }

    /// `table.a AS prefix_a, table.b AS prefix_b, …` (plain `table.a, …` without a prefix).
    package func selectList(prefix: String = "") -> String {
        columns.map { prefix.isEmpty ? "\(table).\($0)" : "\(table).\($0) AS \(prefix)\($0)" }
            .joined(separator: ", ")
    }

    package func decode(_ row: any StoredRow, prefix: String = "") throws -> Model {
        try decoder(prefix.isEmpty ? row : PrefixedRow(row: row, prefix: prefix))
    }
}
