import Foundation

/// Runs `body` while holding an exclusive `flock` on `path` (created if missing): tests in different suites that
/// share one outside resource — the PostgreSQL server fault tests stop and start — take turns.
/// flock conflicts between separate opens even within one process, so this also orders threads.
public func withExclusiveFileLock<T>(_ path: String, _ body: () throws -> T) throws -> T {
    let descriptor = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    defer { close(descriptor) }
    while flock(descriptor, LOCK_EX) != 0 {
        guard errno == EINTR else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }
    return try body()
}
