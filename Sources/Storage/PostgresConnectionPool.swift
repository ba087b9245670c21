import Foundation

/// Lends PostgreSQL connections to one thread at a time: up to `capacity` of them,
/// opened on demand, blocking while all are in use.
///
/// A connection that broke is closed instead of going back to the pool, and a new one
/// is opened in its place the next time one is needed — so the store recovers by
/// itself once the server is back.
///
/// `@unchecked Sendable` because the connections inside are not: `idle` and `open`
/// are only touched under `condition`, and a lent connection belongs to the borrowing
/// thread until it is given back.
final class PostgresConnectionPool: @unchecked Sendable {
    private let condition = NSCondition()
    private var idle: [PostgresConnection] = []
    /// Lent plus idle plus being opened.
    private var open = 0
    let capacity: Int
    /// Seconds `borrow` waits for a connection while all are lent.
    let waitLimit: TimeInterval
    private let connect: () throws(PostgresFailure) -> PostgresConnection

    init(capacity: Int, waitLimit: TimeInterval = 5, connect: @escaping () throws(PostgresFailure) -> PostgresConnection) {
        precondition(capacity > 0, "a pool needs room for at least one connection")
        self.capacity = capacity
        self.waitLimit = waitLimit
        self.connect = connect
    }

    /// An idle connection, or a new one when fewer than `capacity` are open. Fails after
    /// `waitLimit` seconds when every connection stays lent (e.g. all stuck on a slow database).
    func borrow() throws(PostgresFailure) -> PostgresConnection {
        condition.lock()
        let deadline = Date(timeIntervalSinceNow: waitLimit)
        while idle.isEmpty && open >= capacity {
            guard condition.wait(until: deadline) || !(idle.isEmpty && open >= capacity) else {
                condition.unlock()
                throw PostgresFailure(sqlState: nil, message: "every pooled connection stayed busy for \(Int(waitLimit)) s",
                                      connectionLost: true)
            }
        }
        if let connection = idle.popLast() {
            condition.unlock()
            return connection
        }
        open += 1
        condition.unlock()
        do {
            return try connect()
        } catch {
            releaseSlot()
            throw error
        }
    }

    /// Gives a connection back; a broken one (or one left inside a transaction) is closed.
    func giveBack(_ connection: PostgresConnection) {
        guard connection.isUsable, !connection.isInsideTransaction else {
            releaseSlot()  // the connection closes when its last reference goes
            return
        }
        condition.lock()
        idle.append(connection)
        condition.signal()
        condition.unlock()
    }

    /// Closes every idle connection (e.g. all of them after the server restarted).
    func discardIdle() {
        condition.lock()
        let closing = idle
        idle.removeAll()
        open -= closing.count
        condition.broadcast()
        condition.unlock()
    }

    private func releaseSlot() {
        condition.lock()
        open -= 1
        condition.signal()
        condition.unlock()
    }
}
