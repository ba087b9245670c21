import Foundation
@testable import HTTPServer
import Testing
import TestSupport

/// An error no middleware presents.
struct UnexpectedFailure: Error {}

/// `/apple` stands for a request that must call a slow server: it reads its query on the listener thread and
/// continues off it, where it waits `seconds` like a call to a stalled Apple. `/twice-off` continues off the
/// listener twice over; `/failing-off` fails there with an error nobody presents.
func offListenerRouter() -> Router {
    var router = Router()
    router.add("GET", "/fast") { _ in .text("fast") }
    router.add("GET", "/apple", router.fallback.route(replying: { request in
        let (seconds, id) = (Double(request.query["seconds"] ?? "2") ?? 2, request.query["id"] ?? "")
        return .offListener {
            Thread.sleep(forTimeInterval: seconds)
            return Reply(.text("apple:\(id)"))
        }
    }))
    router.add("GET", "/twice-off", router.fallback.route(replying: { _ in .offListener { .offListener { Reply(.text("twice")) } } }))
    router.add("GET", "/failing-off", router.fallback.route(replying: { _ in .offListener { throw UnexpectedFailure() } }))
    return router
}

/// Runs `count` requests at once on their own threads; returns their answers (nil: no answer) in order.
func concurrentRequests(port: Int, count: Int, path: (Int) -> String) -> [RawHTTPResponse?] {
    let paths = (0..<count).map(path)
    let results = Mutex_Results(count: count)
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        Thread {
            results.set(index, try? RawHTTPClient.request(port: port, path: paths[index]))
            group.leave()
        }.start()
    }
    group.wait()
    return results.values
}

final class Mutex_Results: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [RawHTTPResponse?]
    init(count: Int) { stored = Array(repeating: nil, count: count) }
    func set(_ index: Int, _ value: RawHTTPResponse?) { lock.lock(); stored[index] = value; lock.unlock() }
    var values: [RawHTTPResponse?] { lock.lock(); defer { lock.unlock() }; return stored }
}

/// A yes/no outcome set by another thread.
final class Verdict: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Bool?
    func set(_ newValue: Bool) { lock.lock(); value = newValue; lock.unlock() }
    func wait(seconds: Double) -> Bool? {
        let deadline = Date().addingTimeInterval(seconds)
        repeat {
            lock.lock(); let current = value; lock.unlock()
            if let current { return current }
            if seconds > 0 { usleep(10_000) }
        } while Date() < deadline
        return nil
    }
}

func percentile(_ values: [Double], _ fraction: Double) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? .infinity : sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
}

@Suite("Slow work runs off the listener threads", .serialized)
struct OffListenerTests {
    @Test("64 requests waiting 2 s on a stalled server do not slow /fast for another client (p99 < 50 ms)")
    func fastStaysFast() throws {
        try withServer(responder: offListenerRouter()) { server in
            let port = server.port
            let slow = Verdict()
            let background = Thread {
                let answers = concurrentRequests(port: port, count: 64) { "/apple?seconds=2&id=\($0)" }
                let allRight = answers.enumerated().allSatisfy { $0.element?.status == 200 && $0.element?.text == "apple:\($0.offset)" }
                slow.set(allRight)
            }
            background.start()
            while server.inFlightRequests < 64 { usleep(1000) }
            let fast = try KeepAliveHTTPConnection(port: port)
            var latencies: [Double] = []
            let started = Date()
            while Date().timeIntervalSince(started) < 1.5 {
                let before = Date()
                let answer = try fast.request("GET", "/fast")
                latencies.append(Date().timeIntervalSince(before))
                #expect(answer.text == "fast")
                usleep(2000)
            }
            #expect(server.inFlightRequests >= 64)  // the slow ones were still waiting throughout
            #expect(latencies.count > 100)
            #expect(percentile(latencies, 0.99) < 0.050, "p99 \(percentile(latencies, 0.99))")
            #expect(slow.wait(seconds: 10) == true)
        }
    }

    @Test("when every worker is busy and the queue is full, the next one gets 503 with Retry-After at once")
    func poolFull() throws {
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.offListenerWorkers = 2
        configuration.offListenerQueue = 1
        configuration.busyRetryAfterSeconds = 7
        try withServer(configuration, responder: offListenerRouter()) { server in
            let port = server.port
            let held = Verdict()
            let holders = Thread {
                let answers = concurrentRequests(port: port, count: 3) { "/apple?seconds=1&id=\($0)" }
                let allRight = answers.allSatisfy { $0?.status == 200 }
                held.set(allRight)
            }
            holders.start()
            while server.offListenerRequests < 3 { usleep(1000) }
            let before = Date()
            let refused = try RawHTTPClient.request(port: port, path: "/apple?seconds=1&id=x")
            #expect(Date().timeIntervalSince(before) < 0.5)
            #expect(refused.status == 503)
            #expect(refused.header("Retry-After") == "7")
            let fast = try RawHTTPClient.request(port: port, path: "/fast")
            #expect(fast.status == 200)
            #expect(held.wait(seconds: 10) == true)
            let again = try RawHTTPClient.request(port: port, path: "/apple?seconds=0&id=y")
            #expect(again.text == "apple:y")
        }
    }

    @Test("an error nobody presents, thrown off the listener, is a logged 500; work continuing off it again is answered")
    func failureOffListener() throws {
        let log = LogLines()
        let server = MicroHTTPDListener(configuration: ServerConfiguration(host: "127.0.0.1", port: 0),
                                responder: offListenerRouter(), logger: log.logger)
        try server.start()
        let answer = try RawHTTPClient.request(port: server.port, path: "/failing-off")
        let twice = try RawHTTPClient.request(port: server.port, path: "/twice-off")
        server.shutdown()
        #expect(answer.status == 500)
        let logged = log.lines.contains { $0.contains("event=unhandled_error") && $0.contains("UnexpectedFailure") }
        #expect(logged)
        #expect(twice.status == 200)
        #expect(twice.text == "twice")
    }

    @Test("a suspended request outlasting the idle timeout is still answered when its work ends")
    func resumedAfterIdleTimeout() throws {
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.idleTimeoutSeconds = 1
        try withServer(configuration, responder: offListenerRouter()) { server in
            let answer = try RawHTTPClient.request(port: server.port, path: "/apple?seconds=2.5&id=late")
            #expect(answer.status == 200)
            #expect(answer.text == "apple:late")
        }
    }

    @Test("shutdown waits for suspended requests, and answers 503 to those still running after the grace period")
    func shutdownDrains() throws {
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.shutdownGraceSeconds = 1.5
        let server = MicroHTTPDListener(configuration: configuration, responder: offListenerRouter(), logger: .silent)
        try server.start()
        let port = server.port
        let results = Mutex_Results(count: 2)
        let group = DispatchGroup()
        for (index, seconds) in [0.5, 5.0].enumerated() {
            group.enter()
            Thread {
                results.set(index, try? RawHTTPClient.request(port: port, path: "/apple?seconds=\(seconds)&id=\(index)"))
                group.leave()
            }.start()
        }
        while server.inFlightRequests < 2 { usleep(1000) }
        let before = Date()
        server.shutdown()
        #expect(Date().timeIntervalSince(before) < 3)
        group.wait()
        #expect(results.values[0]?.text == "apple:0")
        #expect(results.values[1]?.status == 503)
    }

    @Test("under mixed load on kept-alive connections nothing hangs and every answer is the right one")
    func mixedLoad() throws {
        try withServer(responder: offListenerRouter()) { server in
            let port = server.port
            let wrong = Mutex_Counter()
            DispatchQueue.concurrentPerform(iterations: 16) { worker in
                guard let connection = try? KeepAliveHTTPConnection(port: port) else { wrong.increment(); return }
                for index in 0..<150 {
                    let slow = (index + worker) % 3 == 0
                    let path = slow ? "/apple?seconds=0.001&id=\(worker)-\(index)" : "/fast"
                    let answer = try? connection.request("GET", path)
                    if answer?.text != (slow ? "apple:\(worker)-\(index)" : "fast") { wrong.increment() }
                }
            }
            #expect(wrong.value == 0)
        }
    }
}
