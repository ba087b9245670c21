import Foundation

/// A value bound to a `$n` parameter, on every backend: never spliced into a statement's text.
/// Times are whole unix seconds (see `StoredTime`); a flag is a boolean on PostgreSQL and 0/1 on SQLite.
enum SQLValue {
    case integer(Int64)
    case text(String)
    case blob([UInt8])
    case bool(Bool)
    case null
    /// A PostgreSQL array of `SQLArrayElement`s or `.null`s, which `unnest($n)` turns into rows: one statement then
    /// carries the rows of several writes (`PostgresCoalescedSignIns`). SQLite has no arrays and refuses it.
    case array(SQLArrayElement, [SQLValue])

    static func optionalText(_ string: String?) -> SQLValue {
        string.map { .text($0) } ?? .null
    }

    static func date(_ date: Date) throws -> SQLValue {
        .integer(try StoredTime.unixSeconds(date))
    }

    static func optionalDate(_ date: Date?) throws -> SQLValue {
        guard let date else { return .null }
        return try .date(date)
    }
}

/// The type of an `SQLValue.array`'s elements.
enum SQLArrayElement {
    case integer, text, bool
}
