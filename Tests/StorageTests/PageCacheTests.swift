import CSQLite
import CSQLitePageCache
import Foundation
import Testing
@testable import Storage

extension SQLiteStoreSpecifics {
    /// SQLite's page cache behind the wrapper of CSQLitePageCache: a COMMIT after a page split no longer walks the
    /// whole cache (see its header), and every truncation that can remove a page still does.
    @Suite("Page cache truncations") struct PageCache {
        /// The wrapper's methods, once the store's first connection has installed them.
        static func methods() throws -> sqlite3_pcache_methods2 {
            let database = TestDatabase.temporary()
            defer { database.remove() }
            _ = try SQLiteStore(path: database.sqlitePath, readerCount: 1)
            #expect(bridge_sqlite_install_page_cache() == SQLITE_OK, "SQLite was initialized before the wrapper could be installed")
            return try #require(bridge_sqlite_page_cache_methods()).pointee
        }

        /// A cache of 2 KiB pages holding pages 1...10, unpinned.
        static func cache(_ methods: sqlite3_pcache_methods2) throws -> OpaquePointer {
            let cache = try #require(methods.xCreate(2048, 64, 1))
            methods.xCachesize(cache, 100)
            for number in UInt32(1)...10 {
                methods.xUnpin(cache, methods.xFetch(cache, number, 2), 0)
            }
            return cache
        }

        static func holds(_ methods: sqlite3_pcache_methods2, _ cache: OpaquePointer, _ number: UInt32) -> Bool {
            guard let page = methods.xFetch(cache, number, 0) else { return false }
            methods.xUnpin(cache, page, 0)
            return true
        }

        /// The page number SQLite's B-tree parks a page under while it swaps two (the locking page's) for 2 KiB pages.
        static let parkingNumber = UInt32(0x4000_0000 / 2048 + 1)

        @Test("the store's connections use the wrapper")
        func installed() throws {
            let before = bridge_sqlite_page_caches_created()
            let database = TestDatabase.temporary()
            defer { database.remove() }
            let store = try SQLiteStore(path: database.sqlitePath, readerCount: 2)
            _ = try store.migrate()
            #expect(bridge_sqlite_page_caches_created() - before >= 3, "a writer, two readers and a checkpointer open their caches")
        }

        @Test("two pages swapping numbers through the parking number leave nothing for the end-of-transaction truncation to do")
        func swapThroughParkingNumber() throws {
            let methods = try Self.methods()
            let cache = try Self.cache(methods)
            defer { methods.xDestroy(cache) }
            // What balance_nonroot does to put two new pages in ascending order: 7 and 4 trade numbers.
            let seven = try #require(methods.xFetch(cache, 7, 0)), four = try #require(methods.xFetch(cache, 4, 0))
            methods.xRekey(cache, seven, 7, Self.parkingNumber)
            methods.xRekey(cache, four, 4, 7)
            methods.xRekey(cache, seven, Self.parkingNumber, 4)
            methods.xUnpin(cache, seven, 0)
            methods.xUnpin(cache, four, 0)
            methods.xTruncate(cache, 11)  // the database is 10 pages long
            #expect(bridge_sqlite_page_cache_truncations_passed_on(cache) == 0)
            #expect((1...10).allSatisfy { Self.holds(methods, cache, $0) })
            #expect(!Self.holds(methods, cache, Self.parkingNumber))
        }

        @Test("a truncation still removes pages beyond the limit: fetched there, moved there, or left at the parking number")
        func truncationsThatRemove() throws {
            let methods = try Self.methods()
            let cache = try Self.cache(methods)
            defer { methods.xDestroy(cache) }
            methods.xUnpin(cache, methods.xFetch(cache, 12, 2), 0)
            methods.xTruncate(cache, 11)
            #expect(bridge_sqlite_page_cache_truncations_passed_on(cache) == 1)
            #expect(!Self.holds(methods, cache, 12) && Self.holds(methods, cache, 10))

            let three = try #require(methods.xFetch(cache, 3, 0))
            methods.xRekey(cache, three, 3, 15)
            methods.xUnpin(cache, three, 0)
            methods.xTruncate(cache, 11)
            #expect(bridge_sqlite_page_cache_truncations_passed_on(cache) == 2)
            #expect(!Self.holds(methods, cache, 15) && !Self.holds(methods, cache, 3))

            let five = try #require(methods.xFetch(cache, 5, 0))
            methods.xRekey(cache, five, 5, Self.parkingNumber)
            methods.xUnpin(cache, five, 0)
            methods.xTruncate(cache, 11)
            #expect(bridge_sqlite_page_cache_truncations_passed_on(cache) == 3)
            #expect(!Self.holds(methods, cache, Self.parkingNumber))

            methods.xTruncate(cache, 1)  // what a reader's cache reset asks: everything goes
            #expect(bridge_sqlite_page_cache_truncations_passed_on(cache) == 4)
            #expect((1...10).allSatisfy { !Self.holds(methods, cache, $0) })
        }

        @Test("transactions that split pages under random keys, rolled back and committed, leave an intact database with exactly the committed rows")
        func splitsRolledBackAndCommitted() throws {
            let database = TestDatabase.temporary()
            defer { database.remove() }
            let path = database.sqlitePath
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            let writer = try SQLiteConnection(path: path, setup: """
                PRAGMA page_size = 2048; PRAGMA journal_mode = WAL; PRAGMA cache_size = -8192;
                CREATE TABLE digests (id INTEGER PRIMARY KEY, digest TEXT NOT NULL UNIQUE);
                """, bufferingWAL: true)
            var generator = SystemRandomNumberGenerator()
            func insert(_ count: Int) throws {
                for _ in 0..<count {
                    let digest = (0..<4).map { _ in String(generator.next() as UInt64, radix: 16) }.joined()
                    try writer.run("INSERT INTO digests (digest) VALUES (?)", [.text(digest)])
                }
            }
            var committed = 0
            for round in 0..<20 {
                try writer.run("BEGIN IMMEDIATE")
                try insert(300)
                if round % 3 == 1 {
                    try writer.run("ROLLBACK")
                } else {
                    try writer.run("COMMIT")
                    committed += 300
                }
                let rows = try writer.query("SELECT count(*) AS n FROM digests") { try $0.integer("n") }.first ?? nil
                #expect(rows == Int64(committed), "round \(round)")
            }
            #expect(try writer.query("PRAGMA integrity_check") { try $0.text("integrity_check") } == ["ok"])
            let reopened = try SQLiteConnection(path: path, setup: "")
            #expect(try reopened.query("SELECT count(DISTINCT digest) AS n FROM digests") { try $0.integer("n") }.first == Int64(committed))
        }
    }
}
