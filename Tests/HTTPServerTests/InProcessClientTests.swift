import Foundation
import HTTPServer
import Synchronization
import Testing
import TestSupport

/// Route tests send their requests through `InProcessClient` instead of a socket; these requests go both ways and
/// must be answered alike, so that a route test in process sees what a client on loopback would.
@Suite("Requests in process answered as on loopback", .serialized)
struct InProcessClientTests {
    /// Says what the request looked like to the responder.
    static let echo = ClosureResponder { request in
        let query = request.query.pairs.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
        var response = Response.text("\(request.method) \(request.path) ?\(query) trusted=\(request.peerIsTrustedProxy)"
                                     + " body=\(request.body.count)")
        response.headers.add("X-Padded", "  ")
        if request.path == "/failing" { throw HTTPError(409, "taken") }
        if request.path == "/crash" { throw CocoaError(.fileNoSuchFile) }
        return response
    }

    struct Sent: CustomTestStringConvertible, Sendable {
        var method = "GET"
        var target: String
        var headers: [(String, String)] = []
        var body: [UInt8]? = nil
        var testDescription: String { "\(method) \(target) \(headers.map(\.0))" }
    }

    static let requests: [Sent] = [
        Sent(target: "/plain"),
        Sent(target: "/a%20b/%2Fslash?x=1+2&y=%26&empty=&bare"),
        Sent(target: "/percent%zz%4"),
        Sent(target: "http://login.example.com/absolute?q=1"),
        Sent(target: "/nul%00here"),
        Sent(method: "HEAD", target: "/plain"),
        Sent(method: "POST", target: "/form", headers: [("Content-Type", "text/plain")], body: Array("hello".utf8)),
        Sent(method: "POST", target: "/large", body: [UInt8](repeating: 65, count: 2048)),
        Sent(target: "/forwarded", headers: [("X-Forwarded-For", "203.0.113.9")]),
        Sent(target: "/two-hosts", headers: [("Host", "other.example.com")]),
        Sent(target: "/two-credentials", headers: [("Authorization", "Bearer a"), ("Authorization", "Bearer b")]),
        Sent(target: "/failing"),
        Sent(target: "/crash"),
    ]

    @Test("status, fields and body match the listener's answer", arguments: requests)
    func sameAnswer(_ sent: Sent) throws {
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.maxBodySize = 1024
        let completed = Mutex<[String]>([])
        configuration.requestCompleted = { path, status, _ in completed.withLock { $0.append("\(path) \(status)") } }
        let inProcess = InProcessClient(configuration: configuration, responder: Self.echo)
        try withServer(configuration, responder: Self.echo) { server in
            let overLoopback = try RawHTTPClient.request(port: server.port, method: sent.method, path: sent.target,
                                                         headers: sent.headers, body: sent.body)
            var fields = HTTPHeaders([("Host", "127.0.0.1:\(server.port)"), ("Connection", "close")] + sent.headers)
            if let body = sent.body { fields.add("Content-Length", String(body.count)) }
            let served = RawHTTPResponse(inProcess.respond(method: sent.method, target: sent.target, headers: fields,
                                                           body: sent.body ?? []))
            #expect(served.status == overLoopback.status)
            #expect(served.text == overLoopback.text)
            #expect(served.header("Content-Type") == overLoopback.header("Content-Type"))
            #expect(served.header("X-Padded") == overLoopback.header("X-Padded"))
        }
        // The listener reports its request once it is done; wait for that before comparing.
        for _ in 0..<100 where completed.withLock({ $0.count }) < 2 { usleep(10_000) }
        let reported = completed.withLock { $0 }
        #expect(reported.count == 2 && Set(reported).count == 1, "\(reported)")
    }
}
