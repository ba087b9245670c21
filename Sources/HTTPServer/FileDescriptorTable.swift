#if canImport(Glibc)
import Glibc
#endif

/// The kernel's table of the process's open files, sized before connections arrive.
///
/// The table starts small and doubles when a descriptor past its end is opened. In a process with more than one
/// thread, each doubling waits for an RCU grace period (`synchronize_rcu`, 20-25 ms on the project's machines) inside
/// `accept4`, and the other listener threads, needing the table too, wait behind it: the first burst of connections
/// (a benchmark's 256, or a busy server's clients after a restart) stopped every listener thread for that long, more
/// than once. Grown once at start-up, to the size the connection limit needs, it never grows under load.
public enum FileDescriptorTable {
    /// Grows the table to hold at least `count` descriptors, within the soft limit on open files (`ulimit -n`).
    /// Opens and closes one descriptor; nothing else changes, and failing changes nothing.
    public static func reserve(_ count: Int) {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        let highest = min(count, Int(clamping: limit.rlim_cur)) - 1
        guard highest > 2 else { return }
        let source = open("/dev/null", O_RDONLY | O_CLOEXEC)
        guard source >= 0 else { return }
        // F_DUPFD takes the lowest free descriptor at or above `highest`: unlike dup2, it never closes one in use.
        let placeholder = fcntl(source, F_DUPFD_CLOEXEC, Int32(clamping: highest))
        if placeholder >= 0 { close(placeholder) }
        close(source)
    }
}
