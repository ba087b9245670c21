import Foundation

/// Lends SQLite connections to one thread at a time, blocking while all are in use.
///
/// `@unchecked Sendable` because the connections inside are not: every access to
/// `idle` happens under `condition`, and a lent connection belongs to the borrowing
/// thread until `withConnection` returns.
final class SQLiteReaderPool: @unchecked Sendable {
    private let condition = NSCondition()
    private var idle: [SQLiteConnection]

    init(_ connections: [SQLiteConnection]) {
        precondition(!connections.isEmpty, "a pool needs at least one connection")
        idle = connections
    }

    func withConnection<T>(_ body: (SQLiteConnection) throws -> T) rethrows -> T {
        condition.lock()
        while idle.isEmpty {
            condition.wait()
        }
        let connection = idle.removeLast()
        condition.unlock()
        defer {
            condition.lock()
            idle.append(connection)
            condition.signal()
            condition.unlock()
        }
        return try body(connection)
    }
}
