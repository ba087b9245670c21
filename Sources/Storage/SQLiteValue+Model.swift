import Foundation

// Model types ↔ SQLite storage classes. Times are whole unix seconds (INTEGER),
// booleans are 0/1.

extension SQLiteValue {
    static func optionalText(_ string: String?) -> SQLiteValue {
        string.map { .text($0) } ?? .null
    }

    static func bool(_ flag: Bool) -> SQLiteValue {
        .integer(flag ? 1 : 0)
    }

    static func date(_ date: Date) -> SQLiteValue {
        .integer(date.unixSeconds)
    }

    static func optionalDate(_ date: Date?) -> SQLiteValue {
        date.map { .integer($0.unixSeconds) } ?? .null
    }
}

extension SQLiteRow {
    /// For NOT NULL columns.
    func text(_ column: Int32) -> String {
        optionalText(column) ?? ""
    }

    func bool(_ column: Int32) -> Bool {
        int64(column) != 0
    }

    func date(_ column: Int32) -> Date {
        Date(unixSeconds: int64(column))
    }

    func optionalDate(_ column: Int32) -> Date? {
        isNull(column) ? nil : date(column)
    }
}

extension Date {
    /// Whole seconds since 1970, rounded down — what every backend stores.
    var unixSeconds: Int64 {
        Int64(timeIntervalSince1970.rounded(.down))
    }

    init(unixSeconds: Int64) {
        self.init(timeIntervalSince1970: TimeInterval(unixSeconds))
    }
}
