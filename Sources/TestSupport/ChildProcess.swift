internal import CChildProcess
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process for tests, started with `posix_spawn`.
///
/// Foundation's `Process.run()` on Linux lists `/proc/self/fd` with a copy that reads past glibc's directory buffer
/// and, when that buffer ends at an unmapped page, crashes the calling process (swift-corelibs-foundation pull
/// request 5472, in Swift 6.3): it took a whole test run down on 2026-12-05. This starts the child with nothing
/// but the descriptors it is given (0, 1, 2), as `Process` does.
public final class ChildProcess: @unchecked Sendable {
    /// Where one of the child's output streams goes.
    public enum Output {
        /// A pipe whose reading end is `standardOutput` / `standardError`.
        case pipe
        case discard
        /// Standard error only: into whatever standard output goes to.
        case standardOutput
    }

    public let processIdentifier: Int32
    /// The reading ends of the `.pipe` outputs.
    public let standardOutput: FileHandle?
    public let standardError: FileHandle?
    private let lock = NSLock()
    private var exitStatus: Int32?

    public init(executable: String, arguments: [String], environment: [String: String], directory: String? = nil,
                standardOutput output: Output = .pipe, standardError errors: Output = .pipe) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var parentEnds: [Int32] = []
        var childEnds: [Int32] = []
        defer { childEnds.forEach { close($0) } }

        func route(_ output: Output, to target: Int32) throws -> FileHandle? {
            switch output {
            case .pipe:
                var ends: [Int32] = [0, 0]
                // Not inherited by any other child: every one closes what is not its 0, 1 and 2.
                guard pipe(&ends) == 0 else { throw ChildProcessError("pipe: \(String(cString: strerror(errno)))") }
                parentEnds.append(ends[0])
                childEnds.append(ends[1])
                posix_spawn_file_actions_adddup2(&actions, ends[1], target)
                return FileHandle(fileDescriptor: ends[0], closeOnDealloc: true)
            case .discard:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
                return nil
            case .standardOutput:
                posix_spawn_file_actions_adddup2(&actions, 1, target)
                return nil
            }
        }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        standardOutput = try route(output, to: 1)
        standardError = try route(errors, to: 2)
        if let directory { child_process_add_chdir(&actions, directory) }
        // Nothing else of the test process (its listening sockets, its database connections) reaches the child.
        child_process_add_closefrom(&actions, 3)

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard result == 0 else {
            parentEnds.forEach { close($0) }
            throw ChildProcessError("cannot start \(executable): \(String(cString: strerror(result)))")
        }
        processIdentifier = pid
    }

    /// Waits for the child to end (once; later calls return at once).
    public func waitUntilExit() {
        lock.lock()
        defer { lock.unlock() }
        guard exitStatus == nil else { return }
        var status: Int32 = 0
        while waitpid(processIdentifier, &status, 0) == -1 && errno == EINTR {}
        // The exit code, or the number of the signal that ended it (as Foundation's `terminationStatus`).
        exitStatus = status & 0x7f == 0 ? (status >> 8) & 0xff : status & 0x7f
    }

    /// The exit code, or the signal that ended the child; waits for it first.
    public var terminationStatus: Int32 {
        waitUntilExit()
        return lock.withLock { exitStatus ?? -1 }
    }

    /// SIGTERM.
    public func terminate() {
        kill(processIdentifier, SIGTERM)
    }
}

public struct ChildProcessError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
