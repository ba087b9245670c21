import Foundation
import HTTPServer
import Testing
import TestSupport

/// Starts a real listener on a free loopback port for the duration of `body`.
func withServer<T>(_ configuration: ServerConfiguration = ServerConfiguration(host: "127.0.0.1", port: 0),
                   responder: some HTTPResponder, _ body: (MicroHTTPDListener) throws -> T) throws -> T {
    let server = MicroHTTPDListener(configuration: configuration, responder: responder, logger: .silent)
    try server.start()
    defer { server.shutdown(quiescing: false) }
    return try body(server)
}

func testRouter() -> Router {
    var router = Router()
    router.add("GET", "/echo") { request in .text("echo:\(request.query["value"] ?? "")") }
    router.add("POST", "/form") { request in
        guard let form = request.formBody else { throw HTTPError(415, "form expected") }
        return .text("name=\(form["name"] ?? "")|size=\(request.body.count)")
    }
    router.add("GET", "/page") { _ in .html("<p>hello</p>") }
    router.add("GET", "/slow") { _ in
        Thread.sleep(forTimeInterval: 0.6)
        return .text("finished")
    }
    router.add("GET", "/cookies") { request in .text(request.cookies.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")) }
    router.add("GET", "/crash") { _ in throw CocoaError(.fileNoSuchFile) }
    return router
}

@Suite("HTTP server on loopback", .serialized)
struct HTTPServerTests {
    @Test("answers concurrent requests, each with its own answer")
    func concurrentRequests() throws {
        try withServer(responder: testRouter()) { server in
            let port = server.port
            let failures = Mutex_Counter()
            DispatchQueue.concurrentPerform(iterations: 8) { worker in
                for index in 0..<40 {
                    let value = "w\(worker)-\(index)"
                    let response = try? RawHTTPClient.request(port: port, path: "/echo?value=\(value)")
                    if response?.status != 200 || response?.text != "echo:\(value)" { failures.increment() }
                }
            }
            #expect(failures.value == 0)
        }
    }

    @Test("refuses an oversized body with 413, declared or streamed")
    func oversizedBody() throws {
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.maxBodySize = 1024
        try withServer(configuration, responder: testRouter()) { server in
            let small = try RawHTTPClient.request(port: server.port, method: "POST", path: "/form",
                                                  headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                                  body: "name=Ada+Lovelace")
            #expect(small.status == 200)
            #expect(small.text == "name=Ada Lovelace|size=17")

            let declared = try RawHTTPClient.request(port: server.port, method: "POST", path: "/form",
                                                     headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                                     body: String(repeating: "a", count: 5000))
            #expect(declared.status == 413)

            let chunk = String(repeating: "b", count: 800)
            let chunked = "POST /form HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                + "Transfer-Encoding: chunked\r\n\r\n"
                + "320\r\n\(chunk)\r\n320\r\n\(chunk)\r\n0\r\n\r\n"
            let streamed = try RawHTTPClient.exchange(port: server.port, raw: Array(chunked.utf8))
            #expect(streamed.status == 413)
        }
    }

    @Test("a client waiting for 100 Continue with a body over the limit gets 413 at once, not a 100; one within it gets the 100")
    func expectContinue() throws {
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.maxBodySize = 1024
        try withServer(configuration, responder: testRouter()) { server in
            let head = "POST /form HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                + "Expect: 100-continue\r\nConnection: close\r\n"
            // Only the head is sent: the answer must come without the body (readAll waits at most 30 s).
            let fd = try RawHTTPClient.connect(port: server.port)
            defer { close(fd) }
            let started = Date()
            RawHTTPClient.sendAll(fd, Array((head + "Content-Length: 5000\r\n\r\n").utf8))
            let refused = try RawHTTPClient.parse(RawHTTPClient.readAll(fd))
            #expect(refused.status == 413)
            #expect(Date().timeIntervalSince(started) < 5)
            let small = try RawHTTPClient.exchange(port: server.port, raw: Array((head + "Content-Length: 6\r\n\r\nname=a").utf8))
            #expect(small.status == 100)
            #expect(small.text.contains("name=a|size=6"))
        }
    }

    @Test("404 for an unknown path, 405 with Allow for a known path and another method")
    func notFoundAndMethodNotAllowed() throws {
        try withServer(responder: testRouter()) { server in
            let missing = try RawHTTPClient.request(port: server.port, path: "/nothing-here")
            #expect(missing.status == 404)
            let wrongMethod = try RawHTTPClient.request(port: server.port, method: "DELETE", path: "/echo")
            #expect(wrongMethod.status == 405)
            #expect(wrongMethod.header("Allow") == "GET, HEAD")
        }
    }

    @Test("an unexpected error is a 500 without details, and the server keeps serving")
    func unexpectedError() throws {
        try withServer(responder: testRouter()) { server in
            let crashed = try RawHTTPClient.request(port: server.port, path: "/crash")
            #expect(crashed.status == 500)
            #expect(!crashed.text.contains("CocoaError"))
            #expect(try RawHTTPClient.request(port: server.port, path: "/echo?value=ok").text == "echo:ok")
        }
    }

    @Test("parses query strings, form bodies and cookies")
    func parsing() throws {
        try withServer(responder: testRouter()) { server in
            let echoed = try RawHTTPClient.request(port: server.port, path: "/echo?value=a%20b%2Bc&other=1")
            #expect(echoed.text == "echo:a b+c")
            let cookies = try RawHTTPClient.request(port: server.port, path: "/cookies",
                                                    headers: [("Cookie", "b=2; a=\"1\"; b=3")])
            #expect(cookies.text == "a=1,b=2")
        }
    }

    @Test("security headers on HTML, and no-store when a session cookie is present")
    func securityHeaders() throws {
        let responder = SecurityHeaders(testRouter(), sessionCookieNames: ["sid"])
        try withServer(responder: responder) { server in
            let page = try RawHTTPClient.request(port: server.port, path: "/page")
            #expect(page.header("Content-Security-Policy")?.contains("default-src 'none'") == true)
            #expect(page.header("X-Content-Type-Options") == "nosniff")
            #expect(page.header("Referrer-Policy") == "no-referrer")
            #expect(page.header("X-Frame-Options") == "DENY")
            #expect(page.header("Cache-Control") == nil)
            let withSession = try RawHTTPClient.request(port: server.port, path: "/page", headers: [("Cookie", "sid=abc")])
            #expect(withSession.header("Cache-Control") == "no-store")
            let text = try RawHTTPClient.request(port: server.port, path: "/echo?value=x")
            #expect(text.header("Content-Security-Policy") == nil)
            #expect(text.headerValues("X-Content-Type-Options") == ["nosniff"])
            let missing = try RawHTTPClient.request(port: server.port, path: "/nothing-here")
            #expect(missing.status == 404)
            #expect(missing.headerValues("X-Content-Type-Options") == ["nosniff"])
        }
    }

    @Test("graceful shutdown lets an in-flight request finish, then refuses new connections")
    func gracefulShutdown() throws {
        let server = MicroHTTPDListener(configuration: ServerConfiguration(host: "127.0.0.1", port: 0),
                                responder: testRouter(), logger: .silent)
        try server.start()
        let port = server.port
        let result = ResultBox()
        let thread = Thread { result.set(try? RawHTTPClient.request(port: port, path: "/slow")) }
        thread.start()
        while server.inFlightRequests == 0 { usleep(1000) }
        server.shutdown()
        while !result.isSet { usleep(1000) }
        #expect(result.value?.status == 200)
        #expect(result.value?.text == "finished")
        #expect(throws: RawHTTPError.self) { try RawHTTPClient.request(port: port, path: "/echo") }
    }

    @Test("an idle connection is closed after the idle timeout")
    func idleTimeout() throws {
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.idleTimeoutSeconds = 1
        try withServer(configuration, responder: testRouter()) { server in
            let fd = try RawHTTPClient.connect(port: server.port)
            defer { close(fd) }
            RawHTTPClient.sendAll(fd, Array("GET /echo HTTP/1.1\r\nHost: x\r\n".utf8))  // never finishes the head
            let started = Date()
            let rest = RawHTTPClient.readAll(fd)
            let waited = Date().timeIntervalSince(started)
            #expect(rest.isEmpty)
            #expect(waited < 5)
        }
    }

    @Test("a client over the per-IP connection limit is turned away")
    func perIPLimit() throws {
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.perIPConnectionLimit = 2
        configuration.threadPoolSize = 1
        try withServer(configuration, responder: testRouter()) { server in
            let first = try RawHTTPClient.connect(port: server.port)
            let second = try RawHTTPClient.connect(port: server.port)
            defer { close(first); close(second) }
            usleep(100_000)
            let third = try? RawHTTPClient.request(port: server.port, path: "/echo?value=3")
            #expect(third == nil)
        }
    }

    @Test("refuses a start on a port already in use, naming the address")
    func portInUse() throws {
        try withServer(responder: testRouter()) { server in
            let second = MicroHTTPDListener(configuration: ServerConfiguration(host: "127.0.0.1", port: server.port),
                                    responder: testRouter(), logger: .silent)
            #expect(throws: MicroHTTPDListener.StartError.self) { try second.start() }
            let message = (try? second.start()).map { _ in "" } ?? "cannot listen on 127.0.0.1:\(server.port)"
            #expect(message.hasPrefix("cannot listen on 127.0.0.1:"))
        }
    }
}

final class Mutex_Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.lock(); count += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return count }
}

final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: RawHTTPResponse?
    private var done = false
    func set(_ value: RawHTTPResponse?) { lock.lock(); stored = value; done = true; lock.unlock() }
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return done }
    var value: RawHTTPResponse? { lock.lock(); defer { lock.unlock() }; return stored }
}

@Suite("405 always names the allowed methods")
struct MethodNotAllowedTests {
    @Test("a prefix route for GET also allows HEAD, and Allow says so")
    func prefixRoute() throws {
        var router = Router()
        router.addPrefix("GET", "/public/") { _ in .text("file") }
        let thrown = try? router.respond(to: Request(method: "POST", path: "/public/a.css")).wait()
        #expect(thrown == nil)
        var allow: String?
        do { _ = try router.respond(to: Request(method: "POST", path: "/public/a.css")).wait() } catch let error as HTTPError {
            allow = error.plainTextResponse.headers["Allow"]
        }
        #expect(allow == "GET, HEAD")
        let head = try router.respond(to: Request(method: "HEAD", path: "/public/a.css")).wait()
        #expect(head.status == 200)
    }

    @Test("a 405 keeps Allow through SecurityHeaders and the listener")
    func throughTheListener() throws {
        try withServer(responder: SecurityHeaders(testRouter())) { server in
            let wrong = try RawHTTPClient.request(port: server.port, method: "POST", path: "/page")
            #expect(wrong.status == 405)
            #expect(wrong.headerValues("Allow") == ["GET, HEAD"])
        }
    }

    @Test("an HTTPError rendered as plain text keeps every header it carries")
    func plainText() {
        let error = HTTPError(503, "busy", headers: HTTPHeaders([("Retry-After", "5"), ("Allow", "GET")]))
        let response = error.plainTextResponse
        #expect(response.status == 503)
        #expect(response.headers["Retry-After"] == "5")
        #expect(response.headers["Allow"] == "GET")
        #expect(response.bodyText == "busy\n")
    }
}

@Suite("The router compares bytes")
struct RouterBytesTests {
    func router() -> Router {
        var router = Router()
        let api = RouteGroup("api", owning: ["/api/"], NoMiddleware())
        router.add("GET", "/Kelvin", { _ in .text("exact") })
        router.add("GET", "/api/me", api.route { _ in .text("me") })
        router.addPrefix("GET", "/files/", { _ in .text("file") })
        return router
    }

    @Test("a canonically equal path (KELVIN SIGN for K) is not the registered one")
    func canonicallyEqualPath() throws {
        let router = router()
        #expect(try router.respond(to: Request(method: "GET", path: "/Kelvin")).wait().body == Array("exact".utf8))
        #expect(throws: HTTPError.self) { try router.respond(to: Request(method: "GET", path: "/\u{212A}elvin")).wait() }
        #expect(router.metricsRoute(for: "/\u{212A}elvin") == Router.otherMetricsRoute)
    }

    @Test("a prefix followed by a combining mark is still that prefix: its group, its route")
    func combiningMarkAfterPrefix() throws {
        let router = router()
        #expect(router.group(owning: "/api/\u{331}x").name == "api")
        #expect(try router.respond(to: Request(method: "GET", path: "/files/\u{331}x")).wait().body == Array("file".utf8))
        #expect(router.metricsRoute(for: "/files/\u{301}") == "/files/")
    }
}
