/// What the one SQL store (`SQLTransaction`) needs of a database connection: statements written with `$1 … $n`
/// placeholders, values bound out of band, rows read by column name, and failures as `StoreError`.
protocol SQLConnection {
    var dialect: SQLDialect { get }
    /// Runs a statement and returns how many rows it changed.
    @discardableResult
    func run(_ sql: String, _ values: [SQLValue]) throws -> Int
    /// Runs a statement and decodes every row it returned.
    func query<T>(_ sql: String, _ values: [SQLValue], _ decode: (any StoredRow) throws -> T) throws -> [T]
    /// Runs an `INSERT` that ends in `dialect.returningID`; the new row's id, or nil when it inserted nothing
    /// (`ON CONFLICT DO NOTHING`).
    func insertReturningID(_ sql: String, _ values: [SQLValue]) throws -> Int64?
    /// Runs a statement whose only outcome is success or failure. A connection may send it without waiting:
    /// its failure is then reported by a later statement or the commit, and fails the transaction all the same.
    func send(_ sql: String, _ values: [SQLValue]) throws
}

extension SQLConnection {
    func send(_ sql: String, _ values: [SQLValue]) throws { try run(sql, values) }

    @discardableResult
    func run(_ sql: String) throws -> Int { try run(sql, []) }

    func query<T>(_ sql: String, _ decode: (any StoredRow) throws -> T) throws -> [T] { try query(sql, [], decode) }
}
