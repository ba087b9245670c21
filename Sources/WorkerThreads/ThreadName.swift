import Foundation

/// The kernel's name for the calling thread, as `top -H`, `perf` and `/proc/PID/task/*/comm` show it.
/// Foundation's `Thread.name` stays inside Foundation on Linux, and `pthread_setname_np` is not exported to
/// Swift, so the name is written where the kernel keeps it.
public enum ThreadName {
    /// Sets it; the kernel keeps the first 15 bytes. Does nothing where `/proc` is not mounted.
    public static func setCurrent(_ name: String) {
        let descriptor = open("/proc/thread-self/comm", O_WRONLY)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        var bytes = Array(name.utf8.prefix(15))
        _ = write(descriptor, &bytes, bytes.count)
    }
}
