import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `apple-signin-bridge backup --to FILE`: a consistent copy of the SQLite database, made while servers keep
/// writing to it (SQLite's online backup; a copy of the file and its WAL taken with `cp` is not one).
///
/// The copy is written beside `FILE` under a temporary name, checked (`PRAGMA integrity_check`), and only then
/// given its name, so `FILE` is never a partial copy. It is created 0600: it holds the members' emails.
public enum SQLiteBackup {
    public struct Report: Sendable {
        /// The schema version the copy is at (the database's, which may be older than this build's).
        public let schemaVersion: Int
        public let members: Int
        public let bytes: Int
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Copies the database `database` names into `destination`; an existing `destination` is replaced only with
    /// `overwrite`.
    public static func copy(_ database: DatabaseURL, to destination: String, overwrite: Bool) throws(Failure) -> Report {
        let source: String
        switch database {
        case let .postgres(url):
            throw Failure(description: "BRIDGE_DATABASE is PostgreSQL (\(url)): back it up with PostgreSQL's own tools, "
                + "pg_dump --format=custom (see docs/deployment.md#backups); backup copies SQLite databases only")
        case let .sqlite(path):
            source = path
        }
        guard FileManager.default.fileExists(atPath: source) else {
            throw Failure(description: "no SQLite database at \(source) (BRIDGE_DATABASE): nothing to back up")
        }
        let target = URL(fileURLWithPath: destination)
        let folder = target.deletingLastPathComponent().path
        var folderStatus = stat()
        let found = stat(folder, &folderStatus) == 0
        guard found, folderStatus.st_mode & S_IFMT == S_IFDIR else {
            let reason = !found && errno == EACCES ? "the folder \(folder) cannot be reached (permission denied)"
                : "the folder \(folder) does not exist"
            throw Failure(description: "cannot write \(destination): \(reason)")
        }
        if sameFile(source, target.path) {
            throw Failure(description: "\(destination) is the database itself: name another file")
        }
        if !overwrite, FileManager.default.fileExists(atPath: target.path) {
            throw Failure(description: "\(destination) already exists: add --force to replace it")
        }
        // A write-ahead log beside FILE belongs to the database FILE was: SQLite would apply it to the copy.
        if FileManager.default.fileExists(atPath: target.path + "-wal") {
            throw Failure(description: "\(destination)-wal exists: \(destination) is a database a server has open, or had "
                + "open when it stopped; stop that server, then remove \(destination)-wal and \(destination)-shm")
        }
        let partial = folder + "/." + target.lastPathComponent + ".partial-\(getpid())"
        defer { removeDatabaseFiles(partial) }
        let report: Report
        do {
            report = try copy(source, toNewFile: partial)
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(description: "cannot back up \(source) to \(destination): \(error)")
        }
        try publish(partial, as: target.path, overwrite: overwrite)
        return report
    }

    private static func copy(_ source: String, toNewFile partial: String) throws -> Report {
        removeDatabaseFiles(partial)
        try SQLiteStore.createPrivateFile(at: partial)
        let reading = try SQLiteConnection(path: source, setup: "PRAGMA busy_timeout = 10000;", creating: false)
        let schemaVersion: Int
        do {
            schemaVersion = try reading.query("SELECT max(version) AS version FROM schema_migrations") {
                Int(try $0.integer("version") ?? 0)
            }.first ?? 0
        } catch {
            throw Failure(description: "\(source) is not an AppleSignInBridge database (\(error))")
        }
        let copy = try SQLiteConnection(path: partial, setup: "")
        try reading.copyDatabase(into: copy)
        // The copy's header still says WAL, as the live database's does: a rollback journal makes it one file
        // that opens read-only anywhere. Restored in place, the server switches it back to WAL.
        _ = try copy.query("PRAGMA journal_mode = DELETE") { try $0.text("journal_mode") }
        let integrity = try copy.query("PRAGMA integrity_check") { try $0.text("integrity_check") ?? "" }
        guard integrity == ["ok"] else {
            throw Failure(description: "the copy of \(source) fails SQLite's integrity check: \(integrity.prefix(3).joined(separator: "; "))")
        }
        let members = try copy.query("SELECT count(*) AS members FROM users") { Int(try $0.integer("members") ?? 0) }.first ?? 0
        let bytes = (try? FileManager.default.attributesOfItem(atPath: partial))?[.size] as? Int ?? 0
        return Report(schemaVersion: schemaVersion, members: members, bytes: bytes)
    }

    /// Gives the checked copy its name (atomically: a reader of `destination` sees the old file or the whole
    /// new one), and makes the new name durable.
    private static func publish(_ partial: String, as destination: String, overwrite: Bool) throws(Failure) {
        if overwrite {
            guard rename(partial, destination) == 0 else {
                throw Failure(description: "cannot write \(destination): \(String(cString: strerror(errno)))")
            }
        } else {
            // link refuses an existing name, so a file created there meanwhile is not replaced either.
            guard link(partial, destination) == 0 else {
                let reason = errno == EEXIST ? "it already exists: add --force to replace it" : String(cString: strerror(errno))
                throw Failure(description: "cannot write \(destination): \(reason)")
            }
        }
        let folder = open(URL(fileURLWithPath: destination).deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 {
            _ = fsync(folder)
            close(folder)
        }
    }

    private static func sameFile(_ first: String, _ second: String) -> Bool {
        var a = stat()
        var b = stat()
        guard stat(first, &a) == 0, stat(second, &b) == 0 else { return false }
        return a.st_dev == b.st_dev && a.st_ino == b.st_ino
    }

    private static func removeDatabaseFiles(_ path: String) {
        for suffix in ["", "-journal", "-wal", "-shm"] { unlink(path + suffix) }
    }
}
