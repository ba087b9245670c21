import Foundation

/// SIGINT/SIGTERM delivered synchronously: block them before starting worker threads (which inherit the
/// mask), then `wait()` on the main thread.
public enum ShutdownSignals {
    public static func block() {
        var set = signals()
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Blocks until SIGINT or SIGTERM arrives; returns its number.
    @discardableResult
    public static func wait() -> Int32 {
        var set = signals()
        var received: Int32 = 0
        sigwait(&set, &received)
        return received
    }

    private static func signals() -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        return set
    }
}
