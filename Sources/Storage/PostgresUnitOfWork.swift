import Foundation
import Locking

/// One unit of work on a pooled PostgreSQL connection: the transaction around a closure, and what happens when it
/// fails (a lost race is run again, up to `maximumAttempts` times; an idle connection the server dropped is replaced).
/// The store runs every read and write through it, and its group commit runs through it the writes it cannot batch.
struct PostgresUnitOfWork: Sendable {
    let pool: PostgresConnectionPool
    let url: PostgresURL
    let retries: Lock<RetryCounts>

    struct RetryCounts {
        var serializationFailures = 0
        var deadlocks = 0
        var lockTimeouts = 0
    }

    var scrub: @Sendable (String) -> String { url.scrub }

    static let beginReadCommitted = "BEGIN ISOLATION LEVEL READ COMMITTED"

    /// `begin` nil: no transaction around `body`, for a body of one statement.
    func callAsFunction<T>(
        begin: String?, maximumAttempts: Int, _ body: (any StoreTransaction) throws -> T
    ) throws -> T {
        var attempt = 1
        var staleConnections = 0
        while true {
            let connection = try borrow()
            defer { pool.giveBack(connection) }
            connection.clearFailure()
            do {
                return try transaction(on: connection, begin: begin, body)
            } catch let stale as StaleConnection {
                // An idle connection the server dropped (e.g. it restarted): the others
                // are likely gone too. Nothing ran yet, so try once more on a new one.
                pool.discardIdle()
                staleConnections += 1
                if staleConnections > 1 { throw stale.failure.storeError(scrub: scrub) }
            } catch {
                if connection.lastFailure?.sqlState == "55P03" { retries.withLock { $0.lockTimeouts += 1 } }
                guard let failure = connection.lastFailure, failure.isRetryable, attempt < maximumAttempts else {
                    throw error
                }
                retries.withLock {
                    if failure.sqlState == "40P01" { $0.deadlocks += 1 } else { $0.serializationFailures += 1 }
                }
                attempt += 1
                Self.backOff(attempt: attempt)
            }
        }
    }

    private struct StaleConnection: Error {
        let failure: PostgresFailure
    }

    private func transaction<T>(
        on connection: PostgresConnection, begin: String?, _ body: (any StoreTransaction) throws -> T
    ) throws -> T {
        guard let begin else {
            do {
                return try body(SQLTransaction(connection: PostgresSession(connection: connection, scrub: scrub), updatedMembers: UpdatedMembers()))
            } catch {
                // A dropped connection fails the statement itself: a read, so nothing ran, and it can go again.
                if let failure = connection.lastFailure, failure.connectionLost { throw StaleConnection(failure: failure) }
                throw error
            }
        }
        connection.begin(begin)
        var committing = false
        do {
            let result = try body(SQLTransaction(connection: PostgresSession(connection: connection, scrub: scrub), updatedMembers: UpdatedMembers()))
            committing = true
            do {
                try connection.commit()
            } catch {
                throw error.thrownToCaller(scrub: scrub)
            }
            return result
        } catch {
            connection.abandonUnitOfWork()
            // The connection was found broken by the BEGIN sent with the first statement: nothing ran (nothing
            // uncommitted survives a lost connection), so the unit of work can go again on another one. Not once
            // the COMMIT was sent: the transaction may have committed.
            if let failure = connection.lastFailure, failure.connectionLost, !committing,
               connection.statementsInTransaction <= 1 {
                throw StaleConnection(failure: failure)
            }
            if connection.isUsable && connection.isInsideTransaction {
                try? connection.execute("ROLLBACK")
            }
            throw error
        }
    }

    func borrow() throws -> PostgresConnection {
        do {
            return try pool.borrow()
        } catch {
            throw StoreError.unavailable("cannot connect to \(url): \(url.scrub(error.message))")
        }
    }

    /// A short random pause, growing with each attempt, so racing writers spread out (and a migration that lost a
    /// race with them, `PostgresMigrator`).
    static func backOff(attempt: Int) {
        let ceiling = min(0.002 * pow(2, Double(attempt)), 0.2)
        Thread.sleep(forTimeInterval: Double.random(in: 0...ceiling))
    }
}
