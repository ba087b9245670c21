import Foundation
import Locking
import WorkerThreads

/// The PostgreSQL store, for several instances sharing one database.
///
/// A pool of up to `poolSize` connections, opened on demand. Writes run at SERIALIZABLE
/// isolation, so they behave as if run one after another like SQLite's, unless the caller
/// asks for READ COMMITTED (`WriteIsolation.readCommitted`, for transactions made of
/// conditional statements and locked reads, such as a sign-in); a write that
/// loses a race with another transaction (serialization failure or deadlock, SQLSTATE
/// 40001/40P01) is rolled back and **its closure is run again** from the start, up to
/// `maximumWriteAttempts` times. A `write` closure must therefore do nothing but store
/// work: no side effects that must not happen twice. Reads run on a REPEATABLE READ,
/// READ ONLY snapshot.
///
/// When the server is unreachable, calls throw `StoreError.unavailable` after at most
/// the connect timeout (`connect_timeout`, default 5 s); a broken connection is closed
/// and replaced, so the store recovers by itself once the server is back.
public final class PostgresStore: Store {
    public let backendName = "postgres"
    public let readsWaitOnAnotherProcess = true
    public let url: PostgresURL
    public static let defaultPoolSize = 10
    public static let maximumWriteAttempts = 10
    /// Applies unless the URI or `PGCONNECT_TIMEOUT` sets it.
    static let defaultConnectTimeoutSeconds = 5
    /// Bounds on one statement and one lock wait, so a database that stops answering cannot
    /// hold requests: past them the call fails with `StoreError.unavailable`. Migrations run
    /// without them.
    static let sessionLimits = "SET statement_timeout = 5000; SET lock_timeout = 3000; "
        + "SET idle_in_transaction_session_timeout = 30000"
    /// How long a call waits for a pooled connection while all are busy.
    static let poolWaitSeconds: TimeInterval = 5
    /// Serializes `migrate()` across every instance using the same database.
    static let migrationLockKey: Int64 = 0x4150_5049_4442_5247  // arbitrary, fixed
    private let pool: PostgresConnectionPool
    private let retries = Lock(RetryCounts())

    private struct RetryCounts {
        var serializationFailures = 0
        var deadlocks = 0
        var lockTimeouts = 0
    }

    public var writeRetries: [(cause: String, count: Int)] {
        let counts = retries.withLock { $0 }
        return [("serialization_failure", counts.serializationFailures), ("deadlock", counts.deadlocks)]
    }

    public var lockTimeouts: Int { retries.withLock { $0.lockTimeouts } }
    /// Run the writes of callers that must not wait for the database's round trips: one thread per pooled
    /// connection (more would only wait for a connection).
    private let writeWorkers: WorkerPool

    /// Connects once (so a wrong URL or an unreachable server is reported now) and keeps
    /// that connection in the pool. Call `migrate()` before use.
    public init(url: PostgresURL, poolSize: Int = PostgresStore.defaultPoolSize) throws {
        guard poolSize > 0 else {
            throw StoreError.invalidArgument("the PostgreSQL pool needs at least one connection (got \(poolSize))")
        }
        self.url = url
        writeWorkers = WorkerPool(maxThreads: poolSize, name: "postgres-write")
        let defaults = Self.connectionDefaults(environment: ProcessInfo.processInfo.environment)
        pool = PostgresConnectionPool(capacity: poolSize, waitLimit: Self.poolWaitSeconds) { () throws(PostgresFailure) in
            let connection = try PostgresConnection(conninfo: url.connectionString, defaults: defaults)
            try connection.execute(Self.sessionLimits)
            return connection
        }
        let first = try borrow()
        pool.giveBack(first)
    }

    static func connectionDefaults(environment: [String: String]) -> [String: String] {
        var defaults = ["application_name": "apple-signin-bridge"]
        if environment["PGCONNECT_TIMEOUT"] == nil {
            defaults["connect_timeout"] = String(defaultConnectTimeoutSeconds)
        }
        // A database host that vanishes (no RST) is noticed within about 15 s instead of the kernel's minutes.
        defaults["keepalives_idle"] = "10"
        defaults["keepalives_interval"] = "3"
        defaults["keepalives_count"] = "3"
        defaults["tcp_user_timeout"] = "15000"
        if environment["PGAPPNAME"] != nil {
            defaults["application_name"] = nil
        }
        return defaults
    }

    public func migrate() throws -> [Int] {
        let connection = try borrow()
        defer { pool.giveBack(connection) }
        do {
            try connection.execute("SET statement_timeout = 0; SET lock_timeout = 0")
        } catch {
            throw error.storeError(scrub: url.scrub)
        }
        defer { try? connection.execute(Self.sessionLimits) }
        return try PostgresMigrator(connection: connection, migrations: Migrations.all,
                                    lockKey: Self.migrationLockKey, scrub: url.scrub).migrate(now: Date())
    }

    public func read<T>(_ body: (any StoreTransaction) throws -> T) throws -> T {
        try unitOfWork(begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", maximumAttempts: 1, body)
    }

    /// In autocommit, where one statement sees one snapshot.
    public func readOneStatement<T>(_ body: (any StoreTransaction) throws -> T) throws -> T {
        try unitOfWork(begin: nil, maximumAttempts: 1, body)
    }

    /// See the type's documentation: `body` may run more than once.
    public func write<T>(_ body: (any StoreTransaction) throws -> T) throws -> T {
        try write(isolation: .serializable, body)
    }

    public func write<T>(isolation: WriteIsolation, _ body: (any StoreTransaction) throws -> T) throws -> T {
        let begin = switch isolation {
        case .serializable: "BEGIN ISOLATION LEVEL SERIALIZABLE"
        case .readCommitted: "BEGIN ISOLATION LEVEL READ COMMITTED"
        }
        return try unitOfWork(begin: begin, maximumAttempts: Self.maximumWriteAttempts, body)
    }

    /// Runs `write` on one of the store's worker threads (one per pooled connection), then `completion` there.
    public func write<T: Sendable>(_ body: @escaping @Sendable (any StoreTransaction) throws -> T,
                                   completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        write(isolation: .serializable, body, completion: completion)
    }

    public func write<T: Sendable>(isolation: WriteIsolation, _ body: @escaping @Sendable (any StoreTransaction) throws -> T,
                                   completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        let queued = writeWorkers.run { [self] in completion(Result { try write(isolation: isolation, body) }) }
        if !queued { completion(.failure(StoreError.database("the store is closed"))) }
    }

    deinit { writeWorkers.stop() }

    /// `begin` nil: no transaction around `body`, for a body of one statement.
    private func unitOfWork<T>(
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
                if staleConnections > 1 { throw stale.failure.storeError(scrub: url.scrub) }
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
                return try body(SQLTransaction(connection: PostgresSession(connection: connection, scrub: url.scrub)))
            } catch {
                // A dropped connection fails the statement itself: a read, so nothing ran, and it can go again.
                if let failure = connection.lastFailure, failure.connectionLost { throw StaleConnection(failure: failure) }
                throw error
            }
        }
        connection.begin(begin)
        var committing = false
        do {
            let result = try body(SQLTransaction(connection: PostgresSession(connection: connection, scrub: url.scrub)))
            committing = true
            do {
                try connection.commit()
            } catch {
                throw error.thrownToCaller(scrub: url.scrub)
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

    private func borrow() throws -> PostgresConnection {
        do {
            return try pool.borrow()
        } catch {
            throw StoreError.unavailable("cannot connect to \(url): \(url.scrub(error.message))")
        }
    }

    /// A short random pause, growing with each attempt, so racing writers spread out.
    private static func backOff(attempt: Int) {
        let ceiling = min(0.002 * pow(2, Double(attempt)), 0.2)
        Thread.sleep(forTimeInterval: Double.random(in: 0...ceiling))
    }
}
