import Foundation
import Testing
@testable import Storage

extension SQLiteStoreSpecifics {
    /// The writer's WAL frames go through the buffering VFS (CSQLiteWALBuffer); a second connection on SQLite's
    /// default VFS, as a reader or another process would open the file, checks what reached it.
    @Suite("WAL writes gathered per commit") struct WALBuffer {
        /// A writer on the buffering VFS and a reader on the default one, on a fresh WAL database.
        static func connections(_ database: TestDatabase, writerSetup: String = "") throws -> (SQLiteConnection, SQLiteConnection) {
            let path = database.sqlitePath
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            let writer = try SQLiteConnection(path: path, setup: """
                PRAGMA page_size = 2048; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;
                PRAGMA wal_autocheckpoint = 0; \(writerSetup)
                CREATE TABLE items (id INTEGER PRIMARY KEY, body BLOB NOT NULL);
                """, bufferingWAL: true)
            let reader = try SQLiteConnection(path: path, setup: "PRAGMA query_only = ON;")
            return (writer, reader)
        }

        static func count(_ connection: SQLiteConnection) throws -> (rows: Int64, bytes: Int64) {
            try connection.query("SELECT count(*) AS n, coalesce(sum(length(body)), 0) AS bytes FROM items") {
                (try $0.integer("n") ?? -1, try $0.integer("bytes") ?? -1)
            }.first ?? (-1, -1)
        }

        static func isIntact(_ connection: SQLiteConnection) throws -> Bool {
            try connection.query("PRAGMA integrity_check") { try $0.text("integrity_check") } == ["ok"]
        }

        static func transaction(_ connection: SQLiteConnection, ending end: String = "COMMIT", _ body: () throws -> Void) throws {
            try connection.run("BEGIN")
            try body()
            try connection.run(end)
        }

        static func insert(_ connection: SQLiteConnection, rows: Range<Int>, bytes: Int) throws {
            for id in rows {
                try connection.run("INSERT INTO items (id, body) VALUES (?, ?)",
                                   [.integer(Int64(id)), .blob([UInt8](repeating: UInt8(id % 251), count: bytes))])
            }
        }

        @Test("a commit costs one write call, not two per frame, and the reader sees each commit as soon as it returns")
        func oneWritePerCommit() throws {
            let database = TestDatabase.temporary()
            defer { database.remove() }
            let (writer, reader) = try Self.connections(database)
            try Self.insert(writer, rows: 0..<1, bytes: 10)  // creates the WAL: its header is written and synced
            let before = try #require(writer.bufferedWALWriteCalls)
            for id in 1...200 {
                // Each commit changes two pages (a table leaf and the page that points to it once it splits,
                // or the leaf and the first page) and writes a frame header and page for each.
                try Self.transaction(writer) { try Self.insert(writer, rows: id..<(id + 1), bytes: 300) }
                #expect(try Self.count(reader).rows == Int64(id + 1))
            }
            let calls = try #require(writer.bufferedWALWriteCalls) - before
            #expect(calls == 200, "\(calls) write calls for 200 commits")
            #expect(try Self.isIntact(reader))
        }

        @Test("transactions of 3 MiB and of 12 MiB (past what is held at once) commit whole, in pieces the default VFS accepts")
        func largeTransactions() throws {
            let database = TestDatabase.temporary()
            defer { database.remove() }
            let (writer, reader) = try Self.connections(database, writerSetup: "PRAGMA cache_size = -65536;")
            try Self.transaction(writer) { try Self.insert(writer, rows: 0..<3_000, bytes: 1_000) }
            #expect(try Self.count(reader) == (3_000, 3_000_000))
            try Self.transaction(writer) { try Self.insert(writer, rows: 3_000..<15_000, bytes: 1_000) }
            #expect(try Self.count(reader) == (15_000, 15_000_000))
            #expect(try Self.isIntact(reader))
        }

        @Test("a transaction larger than the writer's cache spills frames before its commit; rolled back, it leaves nothing, and the next commit is whole")
        func spilledTransactions() throws {
            let database = TestDatabase.temporary()
            defer { database.remove() }
            // 20 pages of cache: a transaction of 2,000 rows spills to the WAL long before it commits.
            let (writer, reader) = try Self.connections(database, writerSetup: "PRAGMA cache_size = 20;")
            let spilling = {
                try Self.insert(writer, rows: 0..<2_000, bytes: 500)
                try writer.run("UPDATE items SET body = zeroblob(400) WHERE id % 7 = 0")  // rewrites spilled pages
            }
            try Self.transaction(writer, ending: "ROLLBACK", spilling)
            #expect(try Self.count(reader) == (0, 0))
            try Self.transaction(writer, spilling)
            let updated = Int64((0..<2_000).filter { $0 % 7 == 0 }.count)
            #expect(try Self.count(reader) == (2_000, (2_000 - updated) * 500 + updated * 400))
            #expect(try Self.isIntact(reader))
        }

        @Test("after a checkpoint the WAL starts over from its first frame, and a reopened database holds every commit")
        func restartAndReopen() throws {
            let database = TestDatabase.temporary()
            defer { database.remove() }
            let path = database.sqlitePath
            do {
                let (writer, reader) = try Self.connections(database)
                let checkpointer = try SQLiteConnection(path: path, setup: "")
                var walSizes: [Int] = []
                for round in 0..<5 {
                    try Self.transaction(writer) { try Self.insert(writer, rows: (round * 100)..<(round * 100 + 100), bytes: 200) }
                    let result = try checkpointer.query("PRAGMA wal_checkpoint(PASSIVE)") {
                        (try $0.integer("log") ?? -1, try $0.integer("checkpointed") ?? -1)
                    }
                    #expect(result.first.map { $0.0 == $0.1 } == true, "checkpoint left frames: \(result)")
                    walSizes.append((try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? -1)
                }
                #expect(try Self.count(reader).rows == 500)
                // Each round's frames overwrite the last round's: the file does not grow after the first.
                #expect(Set(walSizes.dropFirst()).count == 1 && walSizes.allSatisfy { $0 == walSizes[0] }, "WAL sizes \(walSizes)")
            }
            let reopened = try SQLiteConnection(path: path, setup: "")
            #expect(try Self.count(reopened) == (500, 100_000))
            #expect(try Self.isIntact(reopened))
        }
    }
}
