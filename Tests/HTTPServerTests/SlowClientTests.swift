import Foundation
@testable import HTTPServer
import Testing
import TestSupport

/// Sends `bytes` one at a time, `interval` apart, until the server closes the connection; returns how long
/// the connection stayed open and how many bytes were sent.
func trickle(port: Int, head: String = "", bytes: String, interval: TimeInterval) throws -> (open: TimeInterval, sent: Int) {
    let fd = try RawHTTPClient.connect(port: port)
    let started = Date()
    RawHTTPClient.sendAll(fd, Array(head.utf8))
    let sent = Mutex_Counter()
    let stop = Verdict()
    let writerDone = DispatchSemaphore(value: 0)
    Thread {
        defer { writerDone.signal() }
        for byte in bytes.utf8 {
            if stop.wait(seconds: 0) != nil { return }
            let result = withUnsafePointer(to: byte) { send(fd, $0, 1, Int32(MSG_NOSIGNAL)) }
            if result != 1 { return }
            sent.increment()
            Thread.sleep(forTimeInterval: interval)
        }
    }.start()
    _ = RawHTTPClient.readAll(fd)  // returns when the server closes (or after 30 s)
    let open = Date().timeIntervalSince(started)
    // The writer must be gone before the descriptor is closed and reused by another test's socket.
    stop.set(true)
    writerDone.wait()
    close(fd)
    return (open, sent.value)
}

func deadlineConfiguration(headers: Double, body: Double) -> ServerConfiguration {
    var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
    configuration.headerTimeoutSeconds = headers
    configuration.bodyTimeoutSeconds = body
    return configuration
}

@Suite("Slow clients are cut off at the header and body deadlines", .serialized)
struct SlowClientTests {
    static let endlessHead = "GET /echo?value=slow HTTP/1.1\r\nHost: x\r\n" + String(repeating: "X-Pad: a\r\n", count: 100)

    @Test("a client trickling one header byte per 200 ms is closed at the header deadline; others are served meanwhile")
    func headerTrickle() throws {
        try withServer(deadlineConfiguration(headers: 1.5, body: 10), responder: testRouter()) { server in
            let port = server.port
            let normal = Verdict()
            Thread {
                var allServed = true
                for index in 0..<10 {
                    let answer = try? RawHTTPClient.request(port: port, path: "/echo?value=\(index)")
                    if answer?.text != "echo:\(index)" { allServed = false }
                    Thread.sleep(forTimeInterval: 0.1)
                }
                normal.set(allServed)
            }.start()
            let (open, sent) = try trickle(port: port, bytes: Self.endlessHead, interval: 0.2)
            #expect(open >= 1.4 && open < 2.6, "open \(open) s")
            #expect(sent >= 5)  // it kept sending: an idle timeout alone would never have fired
            #expect(normal.wait(seconds: 5) == true)
        }
    }

    @Test("a client trickling its body is closed at the body deadline")
    func bodyTrickle() throws {
        try withServer(deadlineConfiguration(headers: 10, body: 1.5), responder: testRouter()) { server in
            let head = "POST /form HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                + "Content-Length: 500\r\n\r\n"
            let (open, sent) = try trickle(port: server.port, head: head, bytes: String(repeating: "a", count: 500),
                                           interval: 0.2)
            #expect(open >= 1.4 && open < 2.6, "open \(open) s")
            #expect(sent >= 5)
        }
    }

    @Test("a kept-alive client sending requests for longer than the header deadline is not cut off; an idle one is")
    func deadlineRestartsPerRequest() throws {
        try withServer(deadlineConfiguration(headers: 0.6, body: 10), responder: testRouter()) { server in
            let connection = try KeepAliveHTTPConnection(port: server.port)
            // Nine requests 0.2 s apart keep one connection busy for at least 1.8 s, three header deadlines: each must
            // be answered (counting requests, not wall time, so a slow machine cannot make this fail).
            let started = Date()
            var answered = 0
            for _ in 0..<9 {
                if (try? connection.request("GET", "/echo?value=k"))?.text == "echo:k" { answered += 1 }
                Thread.sleep(forTimeInterval: 0.2)
            }
            #expect(answered == 9)
            #expect(Date().timeIntervalSince(started) >= 1.8)
            Thread.sleep(forTimeInterval: 1.2)
            let afterIdle = try? connection.request("GET", "/echo?value=k")
            #expect(afterIdle == nil)
        }
    }

    @Test("the log line of a connection closed at a deadline names what it was waiting for: headers, body or idle")
    func deadlineLogNamesThePhase() throws {
        let log = LogLines()
        let server = MicroHTTPDListener(configuration: deadlineConfiguration(headers: 0.5, body: 0.5),
                                        responder: testRouter(), logger: log.logger)
        try server.start()
        defer { server.shutdown(quiescing: false) }
        // The reaper logs just after it shuts a socket down: wait for the line (up to 3 s).
        func phases(count: Int) -> [String] {
            let until = Date().addingTimeInterval(3)
            while true {
                let phases = log.lines.filter { $0.contains("event=connection_deadline") }
                    .map { $0.components(separatedBy: "phase=").last ?? "" }
                if phases.count >= count || Date() > until { return phases }
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
        // Opened and never used (a browser's preconnect), then a body that never comes, then kept alive after an
        // answered request: each is closed, and says which.
        let unused = try RawHTTPClient.connect(port: server.port)
        defer { close(unused) }
        _ = RawHTTPClient.readAll(unused)
        #expect(phases(count: 1) == ["headers"])
        let head = "POST /form HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 9\r\n\r\n"
        let waitingForBody = try RawHTTPClient.connect(port: server.port)
        defer { close(waitingForBody) }
        RawHTTPClient.sendAll(waitingForBody, Array(head.utf8))
        _ = RawHTTPClient.readAll(waitingForBody)
        #expect(phases(count: 2) == ["headers", "body"])
        let keptAlive = try KeepAliveHTTPConnection(port: server.port)
        #expect(try keptAlive.request("GET", "/echo?value=once").text == "echo:once")
        #expect(phases(count: 3) == ["headers", "body", "idle"])
    }

    @Test("a request suspended for a worker outlasts both deadlines and is still answered")
    func suspendedOutlastsDeadlines() throws {
        try withServer(deadlineConfiguration(headers: 0.5, body: 0.5), responder: offListenerRouter()) { server in
            let answer = try RawHTTPClient.request(port: server.port, path: "/apple?seconds=1.5&id=slow")
            #expect(answer.text == "apple:slow")
        }
    }
}

@Suite("Per-client cap on requests in flight", .serialized)
struct ClientCapTests {
    func capped(_ limit: Int, trusting: @escaping @Sendable (String) -> Bool = ServerConfiguration.isLoopback) -> ServerConfiguration {
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.perClientRequestLimit = limit
        configuration.trustsForwardedFor = trusting
        return configuration
    }

    func slowRequest(_ port: Int, forwardedFor: String) {
        Thread {
            _ = try? RawHTTPClient.request(port: port, path: "/apple?seconds=1&id=held",
                                           headers: forwardedFor.isEmpty ? [] : [("X-Forwarded-For", forwardedFor)])
        }.start()
    }

    @Test("behind a trusted proxy the cap counts the forwarded client, not the proxy")
    func behindProxy() throws {
        try withServer(capped(2), responder: offListenerRouter()) { server in
            let port = server.port
            slowRequest(port, forwardedFor: "198.51.100.9, 203.0.113.5")
            slowRequest(port, forwardedFor: "203.0.113.5")
            while server.inFlightRequests < 2 { usleep(1000) }
            let third = try RawHTTPClient.request(port: port, path: "/fast", headers: [("X-Forwarded-For", "203.0.113.5")])
            #expect(third.status == 429)
            #expect(third.header("Retry-After") == "1")
            let other = try RawHTTPClient.request(port: port, path: "/fast", headers: [("X-Forwarded-For", "203.0.113.6")])
            #expect(other.status == 200)
            Thread.sleep(forTimeInterval: 1.3)
            let later = try RawHTTPClient.request(port: port, path: "/fast", headers: [("X-Forwarded-For", "203.0.113.5")])
            #expect(later.status == 200)
        }
    }

    @Test("an untrusted peer's X-Forwarded-For does not get it past the per-IP connection cap")
    func untrustedPeer() throws {
        var configuration = capped(2, trusting: { _ in false })
        configuration.perIPConnectionLimit = 2
        configuration.threadPoolSize = 1
        try withServer(configuration, responder: offListenerRouter()) { server in
            let port = server.port
            slowRequest(port, forwardedFor: "203.0.113.1")
            slowRequest(port, forwardedFor: "203.0.113.2")
            while server.inFlightRequests < 2 { usleep(1000) }
            let third = try? RawHTTPClient.request(port: port, path: "/fast", headers: [("X-Forwarded-For", "203.0.113.3")])
            #expect(third == nil)
        }
    }

    @Test("a direct client is not counted by the forwarded-client cap")
    func directClient() throws {
        try withServer(capped(1), responder: offListenerRouter()) { server in
            let port = server.port
            slowRequest(port, forwardedFor: "")
            while server.inFlightRequests < 1 { usleep(1000) }
            let second = try RawHTTPClient.request(port: port, path: "/fast")
            #expect(second.status == 200)
        }
    }

    @Test("Request.clientAddress follows the listener's trust decision")
    func clientAddress() {
        var request = Request(method: "GET", path: "/", headers: HTTPHeaders([("X-Forwarded-For", "1.2.3.4, 5.6.7.8")]),
                              remoteAddress: "10.0.0.2")
        #expect(request.clientAddress == "10.0.0.2")
        request.peerIsTrustedProxy = true
        #expect(request.clientAddress == "5.6.7.8")
        let local = Request(method: "GET", path: "/", headers: HTTPHeaders([("X-Forwarded-For", "5.6.7.8")]))
        #expect(local.clientAddress == "5.6.7.8")
    }
}
