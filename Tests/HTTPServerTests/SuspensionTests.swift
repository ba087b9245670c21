import Foundation
@testable import HTTPServer
@testable import Logging
import Synchronization
import Testing
import TestSupport

/// Stands in for the database writer: holds the work it is handed until released, then calls each back from its
/// own thread, as a group commit does.
final class HeldWork: Sendable {
    private let waiting = Mutex<[@Sendable () -> Void]>([])

    var count: Int { waiting.withLock { $0.count } }

    func hold(_ callback: @escaping @Sendable () -> Void) { waiting.withLock { $0.append(callback) } }

    /// Once something is held, calls it back, from another thread.
    func releaseWhenHeld() {
        Thread { [self] in
            while count < 1 { usleep(1_000) }
            release()
        }.start()
    }

    /// Calls back everything held so far, on one other thread.
    func release() {
        let callbacks = waiting.withLock { held in defer { held = [] }; return held }
        Thread { for callback in callbacks { callback() } }.start()
    }
}

/// `/held` waits, suspended, until `HeldWork.release()`; `/inline` calls back before the connection could be
/// suspended (like a store that cannot do better than waiting). No handler does anything about being resumed.
func suspendingRouter(_ held: HeldWork) -> Router {
    var router = Router()
    router.add("GET", "/fast") { _ in .text("fast") }
    router.add("GET", "/held", router.fallback.route(replying: { request in
        let id = request.query["id"] ?? ""
        return .after(starting: { done in held.hold { done(.success(id)) } }, answering: { outcome in
            .text("held:\(try outcome.get())")
        })
    }))
    router.add("GET", "/failing", router.fallback.route(replying: { _ in failingWork(held) }))
    router.add("GET", "/inline", router.fallback.route(replying: { _ in
        .after(starting: { done in done(.success("at once")) }, answering: { outcome in
            .text("inline:\(try outcome.get())")
        })
    }))
    return router
}

/// Work held until released that then fails with a 409.
func failingWork(_ held: HeldWork) -> Reply {
    .after(starting: { (done: @escaping @Sendable (Result<String, any Error>) -> Void) in
        held.hold { done(.failure(HTTPError(409, "the work failed"))) }
    }, answering: { outcome in .text(try outcome.get()) })
}

/// Counts its passes and answers an `HTTPError` as `mapped:<status>`, as a group's error mapping would.
struct CountingMiddleware: RouteMiddleware {
    let passes: Mutex_Counter

    func respond(to request: Request, next: (Request) -> Reply) -> Reply {
        passes.increment()
        return next(request).recover { error in
            guard let error = error as? HTTPError else { throw error }
            return .text("mapped:\(error.status)", status: error.status)
        }
    }
}

@Suite("Requests suspended while their work finishes elsewhere", .serialized)
struct SuspensionTests {
    static func oneListenerThread() -> ServerConfiguration {
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.threadPoolSize = 1
        return configuration
    }

    @Test("with one listener thread, 32 requests waiting for their work do not hold it: /fast answers meanwhile, and each waiting request gets its own answer")
    func waitingRequestsFreeTheListener() throws {
        let held = HeldWork()
        try withServer(Self.oneListenerThread(), responder: suspendingRouter(held)) { server in
            let port = server.port
            let answers = Mutex<[RawHTTPResponse?]>([])
            let background = Thread {
                let all = concurrentRequests(port: port, count: 32) { "/held?id=\($0)" }
                answers.withLock { $0 = all }
            }
            background.start()
            let deadline = Date() + 10
            while held.count < 32, Date() < deadline { usleep(1_000) }
            #expect(held.count == 32)
            var latencies: [Double] = []
            for _ in 0..<50 {
                let before = Date()
                let fast = try RawHTTPClient.request(port: port, path: "/fast")
                latencies.append(Date().timeIntervalSince(before))
                #expect(fast.text == "fast")
            }
            #expect(percentile(latencies, 0.99) < 0.250, "p99 \(percentile(latencies, 0.99))")
            #expect(server.inFlightRequests == 32)  // none was answered before its work called back
            held.release()
            while answers.withLock({ $0.isEmpty }), Date() < deadline + 10 { usleep(1_000) }
            let all = answers.withLock { $0 }
            #expect(all.count == 32)
            #expect(all.enumerated().allSatisfy { $0.element?.status == 200 && $0.element?.text == "held:\($0.offset)" })
        }
    }

    @Test("work that fails is answered by the handler's own error mapping, on the same keep-alive connection")
    func failedWork() throws {
        let held = HeldWork()
        try withServer(Self.oneListenerThread(), responder: suspendingRouter(held)) { server in
            let connection = try KeepAliveHTTPConnection(port: server.port)
            held.releaseWhenHeld()
            let failed = try connection.request("GET", "/failing")
            #expect(failed.status == 409)
            #expect(failed.text.contains("the work failed"))
            #expect(try connection.request("GET", "/fast").text == "fast")
        }
    }

    @Test("work that calls back before the request could be suspended is answered at once")
    func calledBackBeforeSuspending() throws {
        try withServer(Self.oneListenerThread(), responder: suspendingRouter(HeldWork())) { server in
            let answer = try RawHTTPClient.request(port: server.port, path: "/inline")
            #expect(answer.status == 200)
            #expect(answer.text == "inline:at once")
        }
    }

    @Test("a route's group middleware answers the resumed work too, and the handler and the middleware run once")
    func groupMiddlewareAroundResumedWork() throws {
        let held = HeldWork()
        let (passes, handlerRuns) = (Mutex_Counter(), Mutex_Counter())
        let group = RouteGroup("counted", owning: ["/counted/"], CountingMiddleware(passes: passes))
        var router = Router()
        router.add("GET", "/counted/failing", group.route(replying: { _ in
            handlerRuns.increment()
            return failingWork(held)
        }))
        try withServer(Self.oneListenerThread(), responder: router) { server in
            held.releaseWhenHeld()
            let failed = try RawHTTPClient.request(port: server.port, path: "/counted/failing")
            #expect(failed.status == 409)
            #expect(failed.text == "mapped:409")
            #expect(handlerRuns.value == 1)
            #expect(passes.value == 1)
            // The group owns its prefix: the router's 404 and 405 there are its answers too.
            #expect(try RawHTTPClient.request(port: server.port, path: "/counted/nothing").text == "mapped:404")
            #expect(try RawHTTPClient.request(port: server.port, method: "POST", path: "/counted/failing").text == "mapped:405")
            #expect(router.group(owning: "/counted/failing") === group)
            #expect(router.group(owning: "/elsewhere") === router.fallback)
        }
    }

    @Test("a responder without a router waits for work elsewhere too, and work calling back with more work is answered")
    func responderWithoutRouter() throws {
        let held = HeldWork()
        let responder = ClosureResponder(replying: { request in
            if request.path == "/fast" { return Reply(.text("fast")) }
            return .after(starting: { done in held.hold { done(.success("first")) } }) { first in
                .after(starting: { done in done(.success("second")) }, answering: { second in
                    .text("\(try first.get()),\(try second.get())")
                })
            }
        })
        try withServer(Self.oneListenerThread(), responder: responder) { server in
            held.releaseWhenHeld()
            let answer = try RawHTTPClient.request(port: server.port, path: "/chained")
            #expect(answer.status == 200)
            #expect(answer.text == "first,second")
            #expect(try RawHTTPClient.request(port: server.port, path: "/fast").text == "fast")
        }
    }

    @Test("a request still suspended when the server stops is answered 503 with Retry-After")
    func shutdownAnswersSuspended() throws {
        let held = HeldWork()
        var configuration = Self.oneListenerThread()
        configuration.shutdownGraceSeconds = 0.3
        let server = MicroHTTPDListener(configuration: configuration, responder: suspendingRouter(held), logger: .silent)
        try server.start()
        let port = server.port
        let answer = Mutex<RawHTTPResponse?>(nil)
        let client = Thread { answer.withLock { $0 = try? RawHTTPClient.request(port: port, path: "/held?id=late") } }
        client.start()
        while held.count < 1 { usleep(1_000) }
        server.shutdown()
        let deadline = Date() + 5
        while answer.withLock({ $0 == nil }), Date() < deadline { usleep(1_000) }
        let refused = answer.withLock { $0 }
        #expect(refused?.status == 503)
        #expect(refused?.header("Retry-After") != nil)
        held.release()  // late work calls back into a stopped server: nothing happens
        Thread.sleep(forTimeInterval: 0.1)
    }
}
