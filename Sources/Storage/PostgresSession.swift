/// A borrowed PostgreSQL connection as the SQL store uses it: libpq's failures become `StoreError`s with the
/// password scrubbed from their text. The connection keeps the first failure (`lastFailure`), which tells the
/// store whether to retry the transaction.
struct PostgresSession: SQLConnection {
    let connection: PostgresConnection
    let scrub: @Sendable (String) -> String
    var dialect: SQLDialect { .postgres }

    @discardableResult
    func run(_ sql: String, _ values: [SQLValue]) throws -> Int {
        do {
            return try connection.run(sql, values)
        } catch {
            throw error.thrownToCaller(scrub: scrub)
        }
    }

    func send(_ sql: String, _ values: [SQLValue], requiring: ChangeRequirement?) throws {
        do {
            try connection.send(sql, values, requiring: requiring)
        } catch {
            throw error.thrownToCaller(scrub: scrub)
        }
    }

    func query<T>(_ sql: String, _ values: [SQLValue], _ decode: (any StoredRow) throws -> T) throws -> [T] {
        let rows: [Result<T, any Error>]
        do {
            rows = try connection.query(sql, values) { row in Result { try decode(row) } }
        } catch {
            throw error.thrownToCaller(scrub: scrub)
        }
        return try rows.map { try $0.get() }
    }

    func query<T>(_ sql: String, _ values: [SQLValue], _ decode: @escaping (any StoredRow) throws -> T,
                  finishing finish: @escaping ([T]) throws -> Void) throws {
        do {
            try connection.queryBeforeCommit(sql, values, { row in Result { try decode(row) } }) { rows in
                try finish(try rows.map { try $0.get() })
            }
        } catch {
            throw error.thrownToCaller(scrub: scrub)
        }
    }

    func settle() throws {
        do {
            try connection.settle()
        } catch {
            throw error.thrownToCaller(scrub: scrub)
        }
    }

    func insertReturningID(_ sql: String, _ values: [SQLValue]) throws -> Int64? {
        try query(sql, values) { try $0.integer("id") }.first ?? nil
    }
}
