import Foundation
@testable import HTTPServer
@testable import Logging
import Testing

/// Standard error of this very process, caught in a pipe while `body` runs (other tests' lines may land in it
/// too; the checks look for this test's own markers only).
private func capturingStandardError(_ body: () -> Void) -> String {
    Logger.flush()
    var ends: [Int32] = [0, 0]
    guard pipe(&ends) == 0 else { return "" }
    let (readEnd, writeEnd) = (ends[0], ends[1])
    let saved = dup(2)
    dup2(writeEnd, 2)
    close(writeEnd)
    let collected = CollectedBytes()
    let done = DispatchSemaphore(value: 0)
    Thread {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(readEnd, &buffer, buffer.count)
            if count <= 0 { break }
            collected.append(buffer[0..<count])
        }
        done.signal()
    }.start()
    body()
    dup2(saved, 2)  // the pipe's last writer goes: the reader sees its end
    close(saved)
    done.wait()
    close(readEnd)
    return collected.text
}

private final class CollectedBytes: @unchecked Sendable {
    private let lock = NSLock()
    private var bytes: [UInt8] = []
    func append(_ more: ArraySlice<UInt8>) { lock.withLock { bytes.append(contentsOf: more) } }
    var text: String { lock.withLock { String(decoding: bytes, as: UTF8.self) } }
}

@Suite("Log lines batched on their way to standard error", .serialized)
struct StandardErrorLogTests {
    @Test("every line arrives whole, each thread's in order, and a warning comes after all that came before it")
    func orderAndWholeness() {
        let marker = "order-\(UUID().uuidString.prefix(8))"
        let text = capturingStandardError {
            let logger = Logger()
            DispatchQueue.concurrentPerform(iterations: 4) { thread in
                for index in 0..<300 {
                    logger.info("\(marker)-line", ["thread": String(thread), "index": String(index)])
                }
            }
            logger.warning("\(marker)-warning")
        }
        let lines = text.split(separator: "\n").filter { $0.contains(marker) }
        #expect(lines.count == 1201)
        #expect(lines.last?.contains("\(marker)-warning") == true, "the warning is written after every earlier line")
        for thread in 0..<4 {
            let indexes = lines.filter { $0.contains(" thread=\(thread) ") }.compactMap { line in
                line.split(separator: " ").first { $0.hasPrefix("index=") }.flatMap { Int($0.dropFirst(6)) }
            }
            #expect(indexes == Array(0..<300), "thread \(thread)'s lines whole and in order")
        }
    }

    @Test("info lines show up within a fraction of a second without anything else written")
    func infoLinesAreWrittenSoon() {
        let marker = "soon-\(UUID().uuidString.prefix(8))"
        let text = capturingStandardError {
            Logger().info("\(marker)-line")
            usleep(300_000)  // fifteen times the batching delay
        }
        #expect(text.contains("\(marker)-line"))
    }
}
