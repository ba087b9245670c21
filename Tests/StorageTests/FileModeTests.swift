import Foundation
import Testing
@testable import Storage

extension SQLiteStoreSpecifics {
    @Suite("File modes") struct FileModes {
        static func mode(_ path: String) throws -> Int {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
        }

        static func temporaryRoot() -> URL {
            FileManager.default.temporaryDirectory.appendingPathComponent("storage-modes-\(UUID().uuidString)")
        }

        @Test("a new database, its WAL and shm are 0600, and the folders the store creates 0700")
        func privateFromTheStart() throws {
            let root = Self.temporaryRoot()
            defer { try? FileManager.default.removeItem(at: root) }
            let path = root.appendingPathComponent("data/bridge.sqlite3").path
            let store = try SQLiteStore(path: path)
            _ = try store.migrate()
            try store.write { try $0.insertLoginAttempt(loginAttempt("s")) }

            #expect(try Self.mode(root.path) == 0o700)
            #expect(try Self.mode(root.appendingPathComponent("data").path) == 0o700)
            for file in [path, path + "-wal", path + "-shm"] {
                #expect(try Self.mode(file) == 0o600, "\(file)")
            }
        }

        @Test("an existing folder keeps its mode")
        func existingFolderUntouched() throws {
            let root = Self.temporaryRoot()
            defer { try? FileManager.default.removeItem(at: root) }
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o750])
            _ = try SQLiteStore(path: root.appendingPathComponent("bridge.sqlite3").path)
            #expect(try Self.mode(root.path) == 0o750)
        }

        @Test("an existing world-readable database keeps working")
        func existingDatabaseWorks() throws {
            let root = Self.temporaryRoot()
            defer { try? FileManager.default.removeItem(at: root) }
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            let path = root.appendingPathComponent("bridge.sqlite3").path
            _ = try SQLiteStore(path: path).migrate()
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)

            let reopened = try SQLiteStore(path: path)
            #expect(try reopened.migrate() == [])
            try reopened.write { try $0.insertLoginAttempt(loginAttempt("s")) }
            #expect(try reopened.read { try $0.loginAttempt(state: "s") } == loginAttempt("s"))
        }
    }
}
