import Foundation
import Testing
@testable import Storage

/// The backends every behaviour test runs on.
enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    var testDescription: String { rawValue }
}

/// A fresh, migrated database of one backend, reachable through as many stores as a test
/// wants (like several processes or instances on one database).
struct StoreFixture {
    /// Where the database is, for what a test reads past the Store API (its schema).
    enum Database {
        case sqlite(path: String)
        case postgres(PostgresURL)
    }

    let store: any Store
    let openAnother: () throws -> any Store
    let database: Database
}

/// Runs `body` on a new, empty database of `backend`, removed afterwards.
func withFreshStore(_ backend: Backend, migrated: Bool = true, _ body: (StoreFixture) throws -> Void) throws {
    switch backend {
    case .sqlite:
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("store-behaviour-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("bridge.sqlite3").path
        let store = try SQLiteStore(path: path)
        if migrated { _ = try store.migrate() }
        try body(StoreFixture(store: store, openAnother: { try SQLiteStore(path: path) }, database: .sqlite(path: path)))
    case .postgres:
        try withFreshPostgresDatabase { url in
            let store = try PostgresStore(url: url, poolSize: 4)
            if migrated { _ = try store.migrate() }
            try body(StoreFixture(store: store, openAnother: { try PostgresStore(url: url, poolSize: 4) },
                                  database: .postgres(url)))
        }
    }
}

/// The PostgreSQL server tests use (`scripts/with-postgres`, which `scripts/test` runs).
enum TestPostgres {
    static let environment = ProcessInfo.processInfo.environment

    /// In CI and under `scripts/test` a missing PostgreSQL is a failure, never a skip.
    static var isRequired: Bool {
        !(environment["CI"] ?? "").isEmpty || environment["BRIDGE_TEST_REQUIRE_POSTGRES"] == "1"
    }

    struct Missing: Error, CustomStringConvertible {
        let description: String
    }

    /// The value of a `BRIDGE_TEST_POSTGRES_*` variable. Without it the test fails when
    /// PostgreSQL is required; otherwise it records a warning (shown in the output) and is
    /// cancelled.
    static func required(_ variable: String) throws -> String {
        if let value = environment[variable], !value.isEmpty {
            return value
        }
        let reason = "\(variable) is not set: run the tests with scripts/test (or scripts/with-postgres swift test)"
        if isRequired {
            throw Missing(description: reason)
        }
        Issue.record(Comment(rawValue: "not run: " + reason), severity: .warning)
        try Test.cancel(Comment(rawValue: reason))
    }

    static func adminURL() throws -> PostgresURL {
        try PostgresURL(try required("BRIDGE_TEST_POSTGRES_URL"))
    }

    /// A connection as the test server's superuser, to its maintenance database.
    static func adminConnection() throws -> PostgresConnection {
        try PostgresConnection(conninfo: adminURL().connectionString, defaults: ["connect_timeout": "5"])
    }
}

/// Creates a database of its own for `body` on the test server (`options` of CREATE DATABASE, such as its
/// collation), and drops it afterwards.
func withFreshPostgresDatabase(options: String = "", _ body: (PostgresURL) throws -> Void) throws {
    let admin = try TestPostgres.adminConnection()
    // Generated, so safe to write into the statement (identifiers cannot be parameters).
    let name = "bridge_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
    try admin.execute("CREATE DATABASE \(name) \(options)")
    defer { try? admin.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
    try body(try TestPostgres.adminURL().withDatabase(name))
}

/// Reads one integer straight from the database, past the Store API.
func postgresScalar(_ sql: String, in url: PostgresURL) throws -> Int64 {
    let connection = try PostgresConnection(conninfo: url.connectionString, defaults: [:])
    return try connection.query(sql) { $0.int64("value") }.first ?? 0
}

extension StoreFixture {
    /// A connection of its own to the database, as the one SQL store sees it, for reading past the Store API.
    func sqlConnection() throws -> any SQLConnection {
        switch database {
        case let .sqlite(path):
            try SQLiteConnection(path: path, setup: "")
        case let .postgres(url):
            PostgresSession(connection: try PostgresConnection(conninfo: url.connectionString, defaults: [:]), scrub: { $0 })
        }
    }
}
