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
}

extension SQLConnection {
    @discardableResult
    func run(_ sql: String) throws -> Int { try run(sql, []) }

    func query<T>(_ sql: String, _ decode: (any StoredRow) throws -> T) throws -> [T] { try query(sql, [], decode) }
}
