import Testing
import TestSupport

/// A process that uses JOSE exits cleanly while other threads are inside OpenSSL. OpenSSL's own exit-time cleanup
/// (registered with `atexit` unless told not to) frees its global locks under those threads; the test runner itself
/// once died with SIGSEGV that way after every test had passed.
@Suite struct ExitWhileBusy {
    @Test func exitsCleanlyWhileThreadsSignAndVerify() throws {
        let executable = try builtExecutable(named: "jose-exit-check")
        // Before the fix about two runs in three crashed (SIGSEGV or SIGBUS); ten make a miss all but impossible.
        var statuses: [Int32] = []
        for _ in 0..<10 {
            let process = try ChildProcess(executable: executable, arguments: [], environment: [:])
            statuses.append(process.terminationStatus)
        }
        #expect(statuses.allSatisfy { $0 == 0 }, "exit statuses or signals: \(statuses.filter { $0 != 0 })")
    }
}
