import Foundation

// Model types ↔ PostgreSQL columns. Times are whole unix seconds (BIGINT), as on every
// backend; flags are BOOLEAN.

extension PostgresValue {
    static func optionalText(_ string: String?) -> PostgresValue {
        string.map { .text($0) } ?? .null
    }

    static func date(_ date: Date) -> PostgresValue {
        .integer(date.unixSeconds)
    }

    static func optionalDate(_ date: Date?) -> PostgresValue {
        date.map { .integer($0.unixSeconds) } ?? .null
    }
}

extension PostgresRow {
    /// For NOT NULL columns.
    func text(_ name: String) -> String {
        optionalText(name) ?? ""
    }

    func date(_ name: String) -> Date {
        Date(unixSeconds: int64(name))
    }

    func optionalDate(_ name: String) -> Date? {
        isNull(name) ? nil : date(name)
    }
}
