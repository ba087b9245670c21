import Foundation
import Testing
@testable import Storage

extension SQLiteStoreSpecifics {
    @Suite("WAL checkpoints") struct Checkpoints {
        static func size(_ path: String) -> Int {
            ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
        }

        static let bulky = String(repeating: "x", count: 8_192)

        /// 4,000 commits of an 8 KiB row each: over 32 MiB of WAL if nothing checkpointed it. The file keeps its
        /// high-water size when the WAL starts over, so the largest size seen bounds its peak.
        static func writeBulkyRows(_ store: SQLiteStore, walPath: String) throws -> Int {
            var largest = 0
            for index in 0..<4_000 {
                try store.write { tx in
                    try tx.insertLoginAttempt(LoginAttempt(state: "s\(index)", nonce: bulky, bindingHash: "b",
                                                           createdAt: t0, expiresAt: t0 + 600))
                }
                largest = max(largest, size(walPath))
            }
            return largest
        }

        @Test("the background checkpointer keeps the WAL bounded under a stream of writes, and empties it when idle")
        func walStaysBounded() throws {
            let database = TestDatabase.temporary()
            defer { database.remove() }
            let path = database.sqlitePath
            let timing = SQLiteCheckpointer.Timing(interval: .milliseconds(20), idleAfter: .milliseconds(200),
                                                   walFrameLimit: 256)
            let store = try SQLiteStore(path: path, readerCount: 1, batchLimits: .init(), checkpointTiming: timing)
            _ = try store.migrate()
            let largest = try Self.writeBulkyRows(store, walPath: path + "-wal")
            #expect(store.checkpointCount > 0)
            #expect(largest < 24 * 1024 * 1024, "largest WAL: \(largest) bytes")
            #expect(waitUntil(seconds: 5) { Self.size(path + "-wal") == 0 }, "WAL after idle: \(Self.size(path + "-wal"))")
            #expect(try store.read { try $0.loginAttempt(state: "s3999") }?.nonce == Self.bulky)
        }

        @Test("with the checkpointer thread held off the CPU (here: stopped), the writer checkpoints and the WAL stays bounded")
        func writerCheckpointsWhenStarved() throws {
            let database = TestDatabase.temporary()
            defer { database.remove() }
            let path = database.sqlitePath
            // The writer's own checkpoint comes at twice the limit: 4,096 frames, 8 MiB of 2 KiB pages.
            let timing = SQLiteCheckpointer.Timing(walFrameLimit: 2_048)
            let store = try SQLiteStore(path: path, readerCount: 1, batchLimits: .init(), checkpointTiming: timing)
            _ = try store.migrate()
            store.stopCheckpointerThread()
            let largest = try Self.writeBulkyRows(store, walPath: path + "-wal")
            #expect(store.writerCheckpointCount > 0)
            #expect(largest < 24 * 1024 * 1024, "largest WAL: \(largest) bytes")
            #expect(try store.read { try $0.loginAttempt(state: "s3999") }?.nonce == Self.bulky)
        }

        @Test("the checkpointer wakes when the WAL has grown by a quarter of its limit, not only on its interval")
        func wakesOnWALGrowth() throws {
            let database = TestDatabase.temporary()
            defer { database.remove() }
            let path = database.sqlitePath
            _ = try SQLiteStore(path: path).migrate()
            // An interval longer than the test: only the WAL's growth can wake it.
            let checkpointer = try SQLiteCheckpointer(path: path, timing: .init(interval: .seconds(600), walFrameLimit: 400))
            defer { checkpointer.stop() }
            checkpointer.start { work in work() }
            for frames in stride(from: 10, through: 90, by: 10) {
                checkpointer.noteCommit(walFrames: frames)
            }
            usleep(200_000)
            #expect(checkpointer.checkpointCount == 0, "woken before 100 frames were added")
            checkpointer.noteCommit(walFrames: 100)
            #expect(waitUntil(seconds: 10) { checkpointer.checkpointCount > 0 })
            // A WAL that started over: its frames count from zero.
            let before = checkpointer.checkpointCount
            checkpointer.noteCommit(walFrames: 60)
            usleep(200_000)
            #expect(checkpointer.checkpointCount == before)
            checkpointer.noteCommit(walFrames: 101)
            #expect(waitUntil(seconds: 10) { checkpointer.checkpointCount > before })
        }

        @Test("a stream of large commits is checkpointed in the background: the writer does not checkpoint itself")
        func writerLeavesCheckpointsToTheCheckpointer() throws {
            let database = TestDatabase.temporary()
            defer { database.remove() }
            let path = database.sqlitePath
            // A 200 s interval, so only the commits can wake the checkpointer. Each commit of a 64 KiB row is about 33
            // frames: woken only after 256 commits, it would let the WAL reach the writer's 8,192 frames first.
            let timing = SQLiteCheckpointer.Timing(interval: .seconds(200), walFrameLimit: 4_096)
            let store = try SQLiteStore(path: path, readerCount: 1, batchLimits: .init(), checkpointTiming: timing)
            _ = try store.migrate()
            let row = String(repeating: "y", count: 64 * 1024)
            for index in 0..<400 {
                try store.write { tx in
                    try tx.insertLoginAttempt(LoginAttempt(state: "s\(index)", nonce: row, bindingHash: "b",
                                                           createdAt: t0, expiresAt: t0 + 600))
                }
                // Commits arriving over time, as sign-ins do: the checkpointer has over half a second to act on a wake
                // before the writer's limit, even on a machine busy with other tests.
                usleep(5_000)
            }
            #expect(store.checkpointCount > 0)
            #expect(store.writerCheckpointCount == 0)
            #expect(try store.read { try $0.loginAttempt(state: "s399") }?.nonce == row)
        }

        @Test("closing the store stops the checkpointer and closes every connection")
        func stopsCleanly() throws {
            let database = TestDatabase.temporary()
            defer { database.remove() }
            let path = database.sqlitePath
            do {
                let store = try SQLiteStore(path: path)
                _ = try store.migrate()
                try store.write { try $0.insertLoginAttempt(loginAttempt("s")) }
                #expect(FileManager.default.fileExists(atPath: path + "-wal"))
            }
            // SQLite removes the WAL when its last connection closes.
            #expect(waitUntil(seconds: 5) { !FileManager.default.fileExists(atPath: path + "-wal") })
            #expect(try SQLiteStore(path: path).read { try $0.loginAttempt(state: "s") } != nil)
        }

        @Test("the last reference let go on the writer thread while the checkpointer waits for that thread to pause writes: the store still closes")
        func lastReferenceOnTheWriterThread() throws {
            let database = TestDatabase.temporary()
            defer { database.remove() }
            final class Holder: @unchecked Sendable { var store: SQLiteStore? }
            let holder = Holder()
            // A WAL limit of 0: the checkpointer wants writes paused after every commit.
            holder.store = try SQLiteStore(path: database.sqlitePath, readerCount: 1, batchLimits: .init(),
                                           checkpointTiming: .init(interval: .milliseconds(5), idleAfter: .seconds(60),
                                                                   walFrameLimit: 0))
            _ = try holder.store?.migrate()
            let closed = DispatchSemaphore(value: 0)
            let checkpointWaited = Collected<Bool>()
            holder.store?.write({ try $0.insertLoginAttempt(loginAttempt("s")) }, completion: { _ in
                // On the writer thread: once the checkpointer, woken by this commit, waits for it, the store goes.
                checkpointWaited.append(waitUntil(seconds: 5) { (holder.store?.waitingWriterCount ?? 0) > 0 })
                holder.store = nil
                closed.signal()
            })
            guard closed.wait(timeout: .now() + 10) == .success else {
                Issue.record("the store's deinit, on the writer thread, waited for the checkpointer waiting for that thread")
                return
            }
            #expect(checkpointWaited.all == [true])
        }
    }
}
