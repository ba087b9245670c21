import Foundation
import Synchronization
import WorkerThreads

/// Log lines on their way to standard error, written in batches by a background thread.
///
/// Every request logs a line, and one `write(2)` per line was a tenth of the server's CPU for a small request
/// (`GET /healthz`). Lines at `info` and below are appended to a buffer that a background thread writes out
/// `delay` after the first line arrives; a `warning` or `error` line is written at once, after what is buffered,
/// so that order is kept. What a batch could lose is the last `delay` of `info` lines on a hard crash or SIGKILL;
/// an ordinary exit (`exit`, or a return from `main`) writes them out (`atexit`), and `flush()` does so on demand.
///
/// The buffer is split in shards, a thread always using the same one: with one buffer behind one lock, the
/// listener threads (eight, on two cores shared with the load) queued on it whenever the holder was preempted,
/// and `GET /healthz` lost more than the batching won. A thread's lines keep their order; lines of different
/// threads within one batch come shard by shard, each with its timestamp.
final class StandardErrorLog: @unchecked Sendable {
    static let shared = StandardErrorLog()

    /// How long lines gather before they are written; they show this much later at most.
    static let delay: useconds_t = 20_000
    /// A shard this large is written by the thread that filled it, so memory stays bounded when stderr is slow.
    static let inlineFlushBytes = 256 * 1024
    /// The largest buffer a shard keeps for reuse after writing it.
    static let keptBufferBytes = 64 * 1024

    private final class Shard: @unchecked Sendable {
        let lock = NSLock()
        /// Under `lock`.
        var pending: [UInt8] = []
        /// The buffer last written out, emptied, to become `pending` at the next drain: so a shard's buffers keep
        /// the capacity they grew to instead of being allocated (and grown, and copied) again after every write.
        /// Under `writing`.
        var spare: [UInt8] = []
    }

    private let shards = (0..<16).map { _ in Shard() }
    private let flusherWaiting = Atomic<Bool>(false)
    private let flusherStarted = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)
    /// Held while batches are written, so that they (and urgent lines) reach the file in order.
    private let writing = NSLock()

    private init() {}

    /// The calling thread's shard: `pthread_self()` is the address of the thread's descriptor, spread by a
    /// multiplicative hash.
    private func currentShard() -> Shard {
        let thread = UInt64(pthread_self())
        return shards[Int((thread &* 0x9E37_79B9_7F4A_7C15) >> 60)]
    }

    /// Appends one whole line (with its newline). `urgent` writes it, and everything before it, at once.
    func append(_ line: [UInt8], urgent: Bool) {
        if urgent {
            // After everything buffered, every thread's: it is the last thing written before it.
            writing.lock()
            drainShards()
            Self.writeAll(line)
            writing.unlock()
            return
        }
        let shard = currentShard()
        shard.lock.lock()
        if shard.pending.capacity == 0 { shard.pending.reserveCapacity(16 * 1024) }
        shard.pending.append(contentsOf: line)
        let full = shard.pending.count >= Self.inlineFlushBytes
        shard.lock.unlock()
        if full {
            flush()
            return
        }
        if !flusherStarted.load(ordering: .relaxed),
           flusherStarted.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged {
            startFlusher()
        }
        // Read first: the flag is read by every line and written only when the flusher goes to sleep.
        if flusherWaiting.load(ordering: .acquiring), flusherWaiting.exchange(false, ordering: .acquiringAndReleasing) {
            wake.signal()
        }
    }

    /// Writes out every buffered line now.
    func flush() {
        writing.lock()
        defer { writing.unlock() }
        drainShards()
    }

    /// Under `writing`.
    private func drainShards() {
        for shard in shards {
            var batch: [UInt8] = []
            shard.lock.lock()
            guard !shard.pending.isEmpty else { shard.lock.unlock(); continue }
            swap(&batch, &shard.pending)
            swap(&shard.pending, &shard.spare)
            shard.lock.unlock()
            Self.writeAll(batch)
            // One burst's large buffer is not kept: sixteen shards would hold it twice each.
            if batch.capacity <= Self.keptBufferBytes {
                batch.removeAll(keepingCapacity: true)
                swap(&batch, &shard.spare)
            }
        }
    }

    private var isEmpty: Bool {
        shards.allSatisfy { shard in shard.lock.withLock { shard.pending.isEmpty } }
    }

    private func startFlusher() {
        atexit { StandardErrorLog.shared.flush() }
        let thread = Thread { [self] in
            ThreadName.setCurrent("log-writer")
            while true {
                if isEmpty {
                    flusherWaiting.store(true, ordering: .releasing)
                    // A line that came in before the flag was up did not signal: look again before sleeping.
                    // (A signal that races with this look leaves one spare wake-up: one empty round, no harm.)
                    if isEmpty {
                        wake.wait()
                    } else {
                        flusherWaiting.store(false, ordering: .releasing)
                    }
                }
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
