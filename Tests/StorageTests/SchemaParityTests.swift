import Foundation
import Testing
@testable import Storage

/// The two backends' schemas, migrated to the latest version, are one schema: the same tables, columns and
/// indexes. Column types differ by design (INTEGER against BIGINT or BOOLEAN, BLOB against BYTEA) and are not
/// compared.
@Suite("Schema, on SQLite and PostgreSQL") struct SchemaParityTests {
    @Test("migrated to the latest version, both backends have the same tables, columns (names, NOT NULL) and indexes (columns, uniqueness)")
    func sameSchema() throws {
        try withFreshStore(.sqlite) { sqlite in
            try withFreshStore(.postgres) { postgres in
                let differences = DatabaseSchema.differences(try sqlite.database.schema(), "SQLite",
                                                             try postgres.database.schema(), "PostgreSQL")
                #expect(differences.isEmpty, "the schemas differ:\n\(differences.joined(separator: "\n"))")
            }
        }
    }

    @Test("on PostgreSQL every TEXT column of a key or an index compares byte by byte (collation C), as all of them do on SQLite")
    func keysCompareByteByByte() throws {
        try withFreshStore(.postgres) { fixture in
            let connection = try fixture.sqlConnection()
            let columns = try connection.query("""
                SELECT DISTINCT c.relname::text AS table_name, a.attname::text AS column_name,
                       co.collname::text AS collation_name
                FROM pg_index AS i
                JOIN pg_class AS c ON c.oid = i.indrelid
                JOIN pg_namespace AS n ON n.oid = c.relnamespace
                JOIN pg_attribute AS a ON a.attrelid = c.oid AND a.attnum = ANY (i.indkey)
                JOIN pg_collation AS co ON co.oid = a.attcollation
                WHERE n.nspname = current_schema() AND a.atttypid = 'text'::regtype
                """, []) { row in
                (column: "\(try row.requiredText("table_name")).\(try row.requiredText("column_name"))",
                 collation: try row.requiredText("collation_name"))
            }
            // What the query sees: the keys a sign-in looks up.
            #expect(Set(columns.map(\.column)).isSuperset(of: ["sessions.id_hash", "login_attempts.state",
                                                                "users.provider_user_id", "identity_token_uses.token_hash"]))
            let linguistic = columns.filter { $0.collation != "C" }.map { "\($0.column) (\($0.collation))" }.sorted()
            #expect(linguistic.isEmpty, "declare these TEXT COLLATE \"C\" on PostgreSQL: \(linguistic)")
        }
    }

    /// Guards `sameSchema` against agreeing on too little: each way a backend keys a table shows as an index.
    @Test("introspection sees the schema: primary keys of every kind, UNIQUE constraints, plain indexes, NOT NULL",
          arguments: Backend.allCases)
    func introspectionSeesTheSchema(backend: Backend) throws {
        try withFreshStore(backend) { fixture in
            let schema = try fixture.database.schema()
            let users = try #require(schema.tables["users"])
            #expect(users.columns.contains(.init(name: "provider_user_id", notNull: true)))
            #expect(users.columns.contains(.init(name: "email", notNull: false)))
            // SQLite: an INTEGER PRIMARY KEY (the rowid, no index of its own) and a UNIQUE constraint.
            #expect(users.indexes.contains(.init(columns: ["id"], unique: true)))
            #expect(users.indexes.contains(.init(columns: ["provider", "provider_user_id"], unique: true)))
            // SQLite: a TEXT PRIMARY KEY of a rowid table (sqlite_autoindex_…), and of a WITHOUT ROWID table.
            #expect(schema.tables["login_attempts"]?.indexes.contains(.init(columns: ["state"], unique: true)) == true)
            #expect(schema.tables["sessions"]?.indexes.contains(.init(columns: ["id_hash"], unique: true)) == true)
            #expect(schema.tables["sessions"]?.indexes.contains(.init(columns: ["user_id"], unique: false)) == true)
            #expect(schema.tables.keys.contains("schema_migrations"))
            #expect(!schema.tables.keys.contains { $0.hasPrefix("sqlite_") })
        }
    }
}

/// A database's tables as both backends can describe them: columns by name and NOT NULL-ness, indexes by the
/// columns they cover (not by name: each backend names the indexes of primary keys and UNIQUE constraints its
/// own way).
struct DatabaseSchema {
    struct Column: Hashable, CustomStringConvertible {
        let name: String
        let notNull: Bool

        var description: String { notNull ? "\(name) NOT NULL" : name }
    }

    /// A primary key or UNIQUE constraint counts as a unique index.
    struct Index: Hashable, Comparable, CustomStringConvertible {
        let columns: [String]
        let unique: Bool
        var partial = false

        var description: String {
            "\(partial ? "partial " : "")\(unique ? "unique " : "")index (\(columns.joined(separator: ", ")))"
        }

        static func < (left: Index, right: Index) -> Bool { left.description < right.description }
    }

    struct Table: CustomStringConvertible {
        /// In the order the table declares them.
        var columns: [Column] = []
        var indexes: [Index] = []

        var description: String {
            "columns \(columns.map(\.description).joined(separator: ", ")); "
                + (indexes.isEmpty ? "no index" : indexes.sorted().map(\.description).joined(separator: ", "))
        }
    }

    var tables: [String: Table] = [:]

    /// One line per table, column or index that is not the same in both, naming the side that has it.
    static func differences(_ left: DatabaseSchema, _ leftName: String,
                            _ right: DatabaseSchema, _ rightName: String) -> [String] {
        var lines: [String] = []
        for name in Set(left.tables.keys).union(right.tables.keys).sorted() {
            guard let leftTable = left.tables[name], let rightTable = right.tables[name] else {
                let (side, table) = left.tables[name].map { (leftName, $0) } ?? (rightName, right.tables[name]!)
                lines.append("table \(name): only in \(side) (\(table))")
                continue
            }
            let leftColumns = Dictionary(uniqueKeysWithValues: leftTable.columns.map { ($0.name, $0.notNull) })
            let rightColumns = Dictionary(uniqueKeysWithValues: rightTable.columns.map { ($0.name, $0.notNull) })
            for column in Set(leftColumns.keys).union(rightColumns.keys).sorted() {
                switch (leftColumns[column], rightColumns[column]) {
                case (_?, nil): lines.append("column \(name).\(column): only in \(leftName)")
                case (nil, _?): lines.append("column \(name).\(column): only in \(rightName)")
                case let (leftNotNull?, rightNotNull?) where leftNotNull != rightNotNull:
                    func nullability(_ notNull: Bool) -> String { notNull ? "NOT NULL" : "nullable" }
                    lines.append("column \(name).\(column): \(nullability(leftNotNull)) in \(leftName), "
                                 + "\(nullability(rightNotNull)) in \(rightName)")
                default: break
                }
            }
            // Counted, not a set: the same columns indexed twice is a difference too.
            let leftIndexes = Dictionary(leftTable.indexes.map { ($0, 1) }, uniquingKeysWith: +)
            let rightIndexes = Dictionary(rightTable.indexes.map { ($0, 1) }, uniquingKeysWith: +)
            for index in Set(leftIndexes.keys).union(rightIndexes.keys).sorted() {
                switch (leftIndexes[index, default: 0], rightIndexes[index, default: 0]) {
                case let (count, other) where count == other: break
                case (_, 0): lines.append("table \(name): \(index) only in \(leftName)")
                case (0, _): lines.append("table \(name): \(index) only in \(rightName)")
                case let (count, other):
                    lines.append("table \(name): \(index) \(count) times in \(leftName), \(other) in \(rightName)")
                }
            }
        }
        return lines
    }
}

extension StoreFixture.Database {
    /// The schema as the database itself reports it, past the Store API.
    func schema() throws -> DatabaseSchema {
        switch self {
        case let .sqlite(path): try Self.sqliteSchema(path: path)
        case let .postgres(url): try Self.postgresSchema(url: url)
        }
    }

    private static func sqliteSchema(path: String) throws -> DatabaseSchema {
        let connection = try SQLiteConnection(path: path, setup: "")
        // SQLite's own tables (sqlite_sequence, which AUTOINCREMENT keeps; sqlite_stat1) are not the schema.
        let tables = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
        var schema = DatabaseSchema()
        var primaryKeys: [String: [(position: Int64, column: String)]] = [:]
        let columns = try connection.query("""
            SELECT t.name AS table_name, c.name AS column_name, c."notnull" AS not_null, c.pk AS key_position
            FROM (\(tables)) AS t, pragma_table_info(t.name) AS c ORDER BY t.name, c.cid
            """) { row in
            (table: try row.requiredText("table_name"), column: try row.requiredText("column_name"),
             notNull: try row.requiredInteger("not_null") != 0, keyPosition: try row.requiredInteger("key_position"))
        }
        for column in columns {
            // A primary key column is NOT NULL as PostgreSQL reports it. (A rowid table's TEXT PRIMARY KEY would take
            // a NULL, a bug SQLite keeps for compatibility; no store writes one, and the rowid is never NULL.)
            schema.tables[column.table, default: .init()].columns
                .append(.init(name: column.column, notNull: column.notNull || column.keyPosition > 0))
            if column.keyPosition > 0 {
                primaryKeys[column.table, default: []].append((column.keyPosition, column.column))
            }
        }
        let indexColumns = try connection.query("""
            SELECT t.name AS table_name, l.name AS index_name, l."unique" AS is_unique, l.origin AS origin,
                   l.partial AS is_partial, i.name AS column_name
            FROM (\(tables)) AS t, pragma_index_list(t.name) AS l, pragma_index_info(l.name) AS i
            ORDER BY t.name, l.name, i.seqno
            """) { row in
            (table: try row.requiredText("table_name"), index: try row.requiredText("index_name"),
             unique: try row.requiredInteger("is_unique") != 0, origin: try row.requiredText("origin"),
             partial: try row.requiredInteger("is_partial") != 0, column: try row.text("column_name") ?? "(expression)")
        }
        var keyIndexed = Set<String>()
        for (_, rows) in Dictionary(grouping: indexColumns, by: { [$0.table, $0.index] }) {
            let first = rows[0]
            schema.tables[first.table]?.indexes.append(.init(columns: rows.map(\.column), unique: first.unique,
                                                             partial: first.partial))
            if first.origin == "pk" { keyIndexed.insert(first.table) }
        }
        // An INTEGER PRIMARY KEY is the rowid itself, the table's own B-tree: it has no index to list.
        for (table, key) in primaryKeys where !keyIndexed.contains(table) {
            schema.tables[table]?.indexes.append(.init(columns: key.sorted { $0.position < $1.position }.map(\.column),
                                                       unique: true))
        }
        return schema
    }

    private static func postgresSchema(url: PostgresURL) throws -> DatabaseSchema {
        let connection = PostgresSession(connection: try PostgresConnection(conninfo: url.connectionString, defaults: [:]),
                                         scrub: { $0 })
        var schema = DatabaseSchema()
        let columns = try connection.query("""
            SELECT c.table_name::text AS table_name, c.column_name::text AS column_name,
                   c.is_nullable::text AS is_nullable
            FROM information_schema.columns AS c
            JOIN information_schema.tables AS t USING (table_catalog, table_schema, table_name)
            WHERE t.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
            ORDER BY c.table_name, c.ordinal_position
            """) { row in
            (table: try row.requiredText("table_name"), column: try row.requiredText("column_name"),
             notNull: try row.text("is_nullable") == "NO")
        }
        for column in columns {
            schema.tables[column.table, default: .init()].columns.append(.init(name: column.column, notNull: column.notNull))
        }
        // Every index of the schema's tables, primary keys' and UNIQUE constraints' included, with its key columns
        // in order (INCLUDE columns left out; an expression has no column).
        let indexes = try connection.query("""
            SELECT t.relname::text AS table_name, x.indisunique AS is_unique, x.indpred IS NOT NULL AS is_partial,
                   (SELECT string_agg(COALESCE(a.attname::text, '(expression)'), ',' ORDER BY k.position)
                    FROM unnest(x.indkey::int2[]) WITH ORDINALITY AS k(attnum, position)
                    LEFT JOIN pg_attribute AS a ON a.attrelid = x.indrelid AND a.attnum = k.attnum
                    WHERE k.position <= x.indnkeyatts) AS columns
            FROM pg_index AS x
            JOIN pg_class AS t ON t.oid = x.indrelid
            JOIN pg_namespace AS n ON n.oid = t.relnamespace
            WHERE n.nspname = current_schema() AND t.relkind = 'r'
            """) { row in
            (table: try row.requiredText("table_name"),
             index: DatabaseSchema.Index(columns: try row.requiredText("columns").split(separator: ",").map(String.init),
                                         unique: try row.bool("is_unique"), partial: try row.bool("is_partial")))
        }
        for index in indexes {
            schema.tables[index.table]?.indexes.append(index.index)
        }
        return schema
    }
}
