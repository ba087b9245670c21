import Foundation

// Model types ↔ PostgreSQL columns. Times are whole unix seconds (BIGINT), as on every
// backend; flags are BOOLEAN.

extension PostgresValue {
    static func optionalText(_ string: String?) -> PostgresValue {
        string.map { .text($0) } ?? .null
    }

    static func date(_ date: Date) throws -> PostgresValue {
        .integer(try StoredTime.unixSeconds(date))
    }

    static func optionalDate(_ date: Date?) throws -> PostgresValue {
        try date.map { .integer(try StoredTime.unixSeconds($0)) } ?? .null
    }
}

extension PostgresRow {
    /// For NOT NULL columns.
    func text(_ name: String) -> String {
        optionalText(name) ?? ""
    }

    func date(_ name: String) -> Date {
        StoredTime.date(fromUnixSeconds: int64(name))
    }

    func optionalDate(_ name: String) -> Date? {
        isNull(name) ? nil : date(name)
    }
}
