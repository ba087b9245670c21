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
/// work: no side effects that must not happen twice. READ COMMITTED writes that wait together share one
/// transaction (`PostgresGroupCommit`). Reads run on a REPEATABLE READ, READ ONLY snapshot.
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
    private let unitOfWork: PostgresUnitOfWork

    public var writeRetries: [(cause: String, count: Int)] {
        let counts = unitOfWork.retries.withLock { $0 }
        return [("serialization_failure", counts.serializationFailures), ("deadlock", counts.deadlocks)]
    }

    public var lockTimeouts: Int { unitOfWork.retries.withLock { $0.lockTimeouts } }
    /// Run the SERIALIZABLE writes of callers that must not wait for the database's round trips: one thread per
    /// pooled connection (more would only wait for a connection).
    private let writeWorkers: WorkerPool
    /// Runs the READ COMMITTED writes (sign-ins, login attempts, rate limits), several in one transaction when
    /// they arrive together.
    private let groupCommit: PostgresGroupCommit

    /// Connects once (so a wrong URL or an unreachable server is reported now) and keeps
    /// that connection in the pool. Call `migrate()` before use.
    public convenience init(url: PostgresURL, poolSize: Int = PostgresStore.defaultPoolSize) throws {
        try self.init(url: url, poolSize: poolSize, batchLimits: .init())
    }

    init(url: PostgresURL, poolSize: Int, batchLimits: PostgresGroupCommit.Limits) throws {
        guard poolSize > 0 else {
            throw StoreError.invalidArgument("the PostgreSQL pool needs at least one connection (got \(poolSize))")
        }
        self.url = url
        writeWorkers = WorkerPool(maxThreads: poolSize, name: "postgres-write")
        let defaults = Self.connectionDefaults(environment: ProcessInfo.processInfo.environment)
        let pool = PostgresConnectionPool(capacity: poolSize, waitLimit: Self.poolWaitSeconds) { () throws(PostgresFailure) in
            let connection = try PostgresConnection(conninfo: url.connectionString, defaults: defaults)
            try connection.execute(Self.sessionLimits)
            return connection
        }
        let unitOfWork = PostgresUnitOfWork(pool: pool, url: url, retries: Lock(.init()))
        self.pool = pool
        self.unitOfWork = unitOfWork
        // Before the lanes start, so that a failure here leaves no thread behind (the write workers start on demand).
        let first = try unitOfWork.borrow()
        encryptsLoopback = first.encryptsLoopback
        pool.giveBack(first)
        groupCommit = PostgresGroupCommit(host: .init(
            borrow: unitOfWork.borrow, giveBack: pool.giveBack,
            runAlone: { body in
                try unitOfWork(begin: PostgresUnitOfWork.beginReadCommitted, maximumAttempts: Self.maximumWriteAttempts, body)
            },
            scrub: unitOfWork.scrub), limits: batchLimits)
    }

    /// The first connection went over TCP with TLS to this machine (`sslmode=prefer`, libpq's default, against a
    /// server with `ssl = on`, as Debian's is): costly, and protecting nothing the Unix socket would not.
    public let encryptsLoopback: Bool

    public var groupCommitCounts: GroupCommitCounts { groupCommit.counts }
    /// Writes waiting for the group commit right now.
    var waitingWriteCount: Int { groupCommit.waitingWriteCount }

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
        let connection = try unitOfWork.borrow()
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

    /// A READ COMMITTED write may share its transaction with others (see `PostgresGroupCommit`).
    public func write<T>(isolation: WriteIsolation, _ body: (any StoreTransaction) throws -> T) throws -> T {
        switch isolation {
        case .serializable:
            try unitOfWork(begin: "BEGIN ISOLATION LEVEL SERIALIZABLE", maximumAttempts: Self.maximumWriteAttempts, body)
        case .readCommitted:
            try groupCommit.write(body)
        }
    }

    /// Runs `write` on one of the store's worker threads (one per pooled connection), then `completion` there; a
    /// READ COMMITTED write on the group commit's lanes instead.
    public func write<T: Sendable>(_ body: @escaping @Sendable (any StoreTransaction) throws -> T,
                                   completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        write(isolation: .serializable, body, completion: completion)
    }

    public func write<T: Sendable>(isolation: WriteIsolation, _ body: @escaping @Sendable (any StoreTransaction) throws -> T,
                                   completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        if isolation != .serializable {
            return groupCommit.write(body, completion: completion)
        }
        let queued = writeWorkers.run { [self] in completion(Result { try write(isolation: isolation, body) }) }
        if !queued { completion(.failure(StoreError.database("the store is closed"))) }
    }

    /// At READ COMMITTED in the group commit, where the sign-ins of one batch may go out together
    /// (`PostgresCoalescedSignIns`).
    public func signIn(_ write: SignInWrite) throws -> SignInOutcome {
        try groupCommit.write(mayCoalesce: true) { try $0.write(write) }.outcome()
    }

    public func signIn(_ write: SignInWrite, completion: @escaping @Sendable (Result<SignInOutcome, any Error>) -> Void) {
        writeMayCoalesce({ try $0.write(write) }, completion: { written in completion(Result { try written.get().outcome() }) })
    }

    /// A READ COMMITTED write whose statements may go out together with other sign-ins' (`signIn`'s).
    func writeMayCoalesce<T: Sendable>(_ body: @escaping @Sendable (any StoreTransaction) throws -> T,
                                       completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        groupCommit.write(mayCoalesce: true, body, completion: completion)
    }

    deinit {
        groupCommit.stop()
        writeWorkers.stop()
    }
}
