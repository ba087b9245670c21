import Foundation
import Testing
@testable import Storage

@Suite("SQLite parameters")
struct SQLiteBindingTests {
    @Test("text is bound byte for byte and rebound on every run of a cached statement: empty stays empty, not NULL")
    func textRebound() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("binding-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let connection = try SQLiteConnection(path: directory.appendingPathComponent("db.sqlite3").path, setup: "")
        try connection.run("CREATE TABLE t (n INTEGER, v TEXT)", [])
        let values = ["", "a", "short", String(repeating: "long value ", count: 40), "ünïcödé ✓", "", "tail\u{0}after"]
        for (index, value) in values.enumerated() {
            try connection.run("INSERT INTO t (n, v) VALUES (?1, ?2)", [.integer(Int64(index)), .text(value)])
        }
        // A run with fewer distinct values must not see an earlier run's text left bound.
        try connection.run("INSERT INTO t (n, v) VALUES (?1, ?2)", [.integer(99), .null])
        let read = try connection.query("SELECT n, v, v IS NULL AS missing, length(CAST(v AS BLOB)) AS bytes FROM t ORDER BY n", []) {
            (try $0.integer("n"), try $0.text("v"), try $0.integer("missing"), try $0.integer("bytes"))
        }
        #expect(read.count == values.count + 1)
        for (index, value) in values.enumerated() {
            #expect(read[index].0 == Int64(index))
            #expect(read[index].1 == value)
            #expect(read[index].2 == 0)
            #expect(read[index].3 == Int64(value.utf8.count))
        }
        #expect(read.last?.2 == 1)
    }
}
