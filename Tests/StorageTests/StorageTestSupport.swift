import Foundation
import Synchronization
import Testing
@testable import Storage

/// Behaviour every `Store` must have, checked only through `any Store`, each test on every
/// backend (`arguments: Backend.allCases` and `withFreshStore`).
@Suite("Store behaviour") struct StoreBehaviour {}

/// What is true of the SQLite store alone: its file, pragmas, migrations and writer.
@Suite("SQLite store") struct SQLiteStoreSpecifics {}

/// A fixed, whole-second instant: the store keeps unix seconds.
let t0 = Date(timeIntervalSince1970: 1_750_000_000)

/// A database of its own for one test, named by its `BRIDGE_DATABASE` value.
struct TestDatabase {
    let url: String
    fileprivate let directory: URL

    /// A SQLite file in a fresh temporary directory.
    static func temporary() -> TestDatabase {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("storage-tests-\(UUID().uuidString)")
        return TestDatabase(url: "sqlite:\(directory.path)/bridge.sqlite3", directory: directory)
    }

    /// The SQLite file's path (`url` without its `sqlite:`), for opening connections or a store directly.
    var sqlitePath: String { String(url.dropFirst("sqlite:".count)) }

    /// Another store on the same database, as a second process would open it.
    func open() throws -> any Store {
        try StoreFactory.open(url)
    }

    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A fresh SQLite store (migrated unless told otherwise), removed afterwards; behaviour
/// tests use `withFreshStore` instead, to run on every backend.
func withTemporaryStore(migrated: Bool = true, _ body: (any Store, TestDatabase) throws -> Void) throws {
    let database = TestDatabase.temporary()
    defer { database.remove() }
    let store = try database.open()
    if migrated {
        _ = try store.migrate()
    }
    try body(store, database)
}

/// A fresh SQLite store and its file path, for the SQLite-only facts.
func withTemporarySQLiteStore(migrated: Bool = true, _ body: (SQLiteStore, _ path: String) throws -> Void) throws {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("storage-tests-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("bridge.sqlite3").path
    let store = try SQLiteStore(path: path)
    if migrated {
        _ = try store.migrate()
    }
    try body(store, path)
}

/// Reads one integer straight from the file, past the Store API (name the column `value`).
func scalar(_ sql: String, in path: String) throws -> Int64 {
    let connection = try SQLiteConnection(path: path, setup: "")
    return try connection.query(sql) { try $0.integer("value") }.first.flatMap { $0 } ?? 0
}

func tableNames(in path: String) throws -> Set<String> {
    let connection = try SQLiteConnection(path: path, setup: "")
    return Set(try connection.query("SELECT name FROM sqlite_master WHERE type = 'table'") { try $0.requiredText("name") })
}

/// Every migration version this build ships.
let allMigrationVersions = Migrations.all.map(\.version)

func appleProfile(sub: String, email: String? = nil, verified: Bool = true, privateRelay: Bool = false,
                  name: String? = nil) -> AppleUserProfile {
    AppleUserProfile(sub: sub, email: email, emailVerified: verified, isPrivateEmail: privateRelay, displayName: name)
}

func loginAttempt(_ state: String, createdAt: Date = t0, lifetime: TimeInterval = 600) -> LoginAttempt {
    LoginAttempt(state: state, nonce: "nonce-\(state)", bindingHash: "binding-\(state)",
                 createdAt: createdAt, expiresAt: createdAt.addingTimeInterval(lifetime))
}

func session(_ idHash: String, userID: Int64, createdAt: Date = t0, lifetime: TimeInterval = 3600) -> Session {
    Session(idHash: idHash, userID: userID, flow: "web", nonceVerified: true,
            createdAt: createdAt, expiresAt: createdAt.addingTimeInterval(lifetime))
}

func apiNonce(_ nonce: String, createdAt: Date = t0, lifetime: TimeInterval = 300) -> APINonce {
    APINonce(nonce: nonce, createdAt: createdAt, expiresAt: createdAt.addingTimeInterval(lifetime))
}

func refreshToken(_ tokenHash: String, family: String, sessionIDHash: String, userID: Int64,
                  createdAt: Date = t0, lifetime: TimeInterval = 86_400) -> RefreshToken {
    RefreshToken(tokenHash: tokenHash, familyID: family, sessionIDHash: sessionIDHash, userID: userID,
                 createdAt: createdAt, expiresAt: createdAt.addingTimeInterval(lifetime))
}

/// A new Apple user (by `sub`) with one session per hash; returns the user's id.
@discardableResult
func userWithSessions(_ sub: String, _ sessionIDHashes: [String], lifetime: TimeInterval = 86_400,
                      in store: any Store) throws -> Int64 {
    try store.write { tx in
        let user = try tx.upsertAppleUser(appleProfile(sub: sub), now: t0).user
        for idHash in sessionIDHashes {
            try tx.insertSession(session(idHash, userID: user.id, lifetime: lifetime))
        }
        return user.id
    }
}

struct Abort: Error {}

/// Runs `body(index)` on `count` real threads released together, and waits for all.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let start = DispatchSemaphore(value: 0)
    let finished = DispatchGroup()
    for index in 0..<count {
        finished.enter()
        Thread {
            start.wait()
            body(index)
            finished.leave()
        }.start()
    }
    for _ in 0..<count {
        start.signal()
    }
    finished.wait()
}

/// Polls `condition` until it holds or `seconds` pass; returns whether it held.
@discardableResult
func waitUntil(seconds: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = Date(timeIntervalSinceNow: seconds)
    while !condition() && Date() < deadline { usleep(2_000) }
    return condition()
}

/// Values appended from many threads.
final class Collected<Element: Sendable>: Sendable {
    private let items = Mutex<[Element]>([])

    func append(_ item: Element) {
        items.withLock { $0.append(item) }
    }

    var all: [Element] {
        items.withLock { $0 }
    }
}

extension StoreTransaction {
    /// A sign-in's member step alone, as `SignInWrite` takes it (its row learnt by the commit at the latest), for
    /// tests of the statements around it.
    func signInAppleUser(_ profile: AppleUserProfile, now: Date) throws -> PendingMember {
        if let sqlite = self as? SQLTransaction<SQLiteConnection> { return try sqlite.signInAppleUser(profile, now: now) }
        if let postgres = self as? SQLTransaction<PostgresSession> { return try postgres.signInAppleUser(profile, now: now) }
        if let recorded = self as? SQLTransaction<PostgresCoalescedSignIns.Recorder> {
            return try recorded.signInAppleUser(profile, now: now)
        }
        throw StoreError.database("not a SQL store's transaction")
    }
}
