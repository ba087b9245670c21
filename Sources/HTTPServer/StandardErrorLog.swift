import Foundation
import WorkerThreads

/// Log lines on their way to standard error, written in batches by a background thread.
///
/// Every request logs a line, and one `write(2)` per line was a tenth of the server's CPU for a small request
/// (`GET /healthz`). Lines at `info` and below are appended to a buffer that a background thread writes out
/// `delay` after the first line arrives; a `warning` or `error` line is written at once, after what is buffered,
/// so that order is kept. What a batch could lose is the last `delay` of `info` lines on a hard crash or SIGKILL;
/// an ordinary exit (`exit`, or a return from `main`) writes them out (`atexit`), and `flush()` does so on demand.
final class StandardErrorLog: @unchecked Sendable {
    static let shared = StandardErrorLog()

    /// How long lines gather before they are written; they show this much later at most.
    static let delay: useconds_t = 20_000
    /// A buffer this large is written by the thread that filled it, so memory stays bounded when stderr is slow.
    static let inlineFlushBytes = 1 << 20

    private let lock = NSLock()
    // Under `lock`:
    private var pending: [UInt8] = []
    private var flusherWaiting = false
    private var flusherStarted = false

    private let wake = DispatchSemaphore(value: 0)
    /// Held while a batch is written, so that batches (and urgent lines) reach the file in order.
    private let writing = NSLock()

    private init() {
        pending.reserveCapacity(64 * 1024)
    }

    /// Appends one whole line (with its newline). `urgent` writes it, and everything before it, at once.
    func append(_ line: [UInt8], urgent: Bool) {
        lock.lock()
        pending.append(contentsOf: line)
        let mustFlush = urgent || pending.count >= Self.inlineFlushBytes
        var signal = false
        if !mustFlush {
            if !flusherStarted {
                flusherStarted = true
                startFlusher()
            }
            if flusherWaiting {
                flusherWaiting = false
                signal = true
            }
        }
        lock.unlock()
        if mustFlush { flush() } else if signal { wake.signal() }
    }

    /// Writes out every buffered line now.
    func flush() {
        writing.lock()
        defer { writing.unlock() }
        lock.lock()
        var batch: [UInt8] = []
        swap(&batch, &pending)
        pending.reserveCapacity(64 * 1024)
        lock.unlock()
        Self.writeAll(batch)
    }

    private func startFlusher() {
        atexit { StandardErrorLog.shared.flush() }
        let thread = Thread { [self] in
            ThreadName.setCurrent("log-writer")
            while true {
                lock.lock()
                let empty = pending.isEmpty
                if empty { flusherWaiting = true }
                lock.unlock()
                if empty { wake.wait() }
                usleep(Self.delay)
                flush()
            }
        }
        thread.name = "log-writer"
        thread.start()
    }

    private static func writeAll(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(2, buffer.baseAddress! + offset, buffer.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return  // standard error is gone or full: nothing better to do with a log line
                }
            }
        }
    }
}
