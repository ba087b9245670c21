import Foundation

// Model types → SQLite storage classes. Times are whole unix seconds (INTEGER, see
// `StoredTime`), booleans are 0/1.

extension SQLiteValue {
    static func optionalText(_ string: String?) -> SQLiteValue {
        string.map { .text($0) } ?? .null
    }

    static func bool(_ flag: Bool) -> SQLiteValue {
        .integer(flag ? 1 : 0)
    }

    static func date(_ date: Date) throws -> SQLiteValue {
        .integer(try StoredTime.unixSeconds(date))
    }

    static func optionalDate(_ date: Date?) throws -> SQLiteValue {
        guard let date else { return .null }
        return try .date(date)
    }
}
