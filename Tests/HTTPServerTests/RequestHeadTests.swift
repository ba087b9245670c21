import Foundation
@testable import HTTPServer
import Testing
import TestSupport

@Suite("The request head as RFC 9112 asks: Host, header names, absolute-form targets", .serialized)
struct RequestHeadTests {
    /// The answers to `raw` sent on one connection, which is closed after them.
    func answers(_ raw: String) throws -> [RawHTTPResponse] {
        try withServer(responder: testRouter()) { server in try responses(port: server.port, raw: raw) }
    }

    @Test("an HTTP/1.1 request without Host is refused with 400; HTTP/1.0 may leave it out")
    func missingHost() throws {
        let refused = try answers("GET /echo?value=a HTTP/1.1\r\nConnection: close\r\n\r\n")
        #expect(refused.map(\.status) == [400])
        #expect(refused.first?.text == "The request has no Host header (required since HTTP/1.1).\n")
        let old = try answers("GET /echo?value=a HTTP/1.0\r\n\r\n")
        #expect(old.map(\.status) == [200])
        #expect(old.first?.text == "echo:a")
    }

    @Test("more than one Host, or one that is not a host, is refused with 400", arguments: [
        "Host: a\r\nHost: b\r\n", "Host: a\r\nhost: a\r\n", "Host: a b\r\n", "Host: a/b\r\n", "Host: user@a\r\n",
        "Host: a:8o\r\n", "Host: [::1\r\n", "Host: [::1]x\r\n",
    ])
    func badHost(fields: String) throws {
        let refused = try answers("GET /echo?value=a HTTP/1.1\r\n\(fields)Connection: close\r\n\r\n")
        #expect(refused.map(\.status) == [400])
    }

    @Test("names, addresses, ports and an empty Host are accepted", arguments: [
        "login.example.com", "LOGIN.example.com:443", "127.0.0.1:8080", "[::1]:8080", "[2001:db8::1]", "a_b-c~d",
        "xn--bcher-kva.example", "host:", "",
    ])
    func goodHost(host: String) throws {
        let answered = try answers("GET /echo?value=a HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n")
        #expect(answered.map(\.status) == [200])
    }

    @Test("whitespace between a header name and its colon is refused with 400 and the connection closed")
    func spaceBeforeColon() throws {
        for head in ["POST /form HTTP/1.1\r\nHost: x\r\nContent-Length : 6\r\n",
                     "POST /form HTTP/1.1\r\nHost: x\r\nTransfer-Encoding\t: chunked\r\n",
                     "GET /echo?value=a HTTP/1.1\r\nHost: x\r\nX-Note : a\r\n",
                     "GET /echo?value=a HTTP/1.1\r\nHost : x\r\n"] {
            let refused = try answers(head + "\r\nname=a" + SmugglingTests.smuggled)
            #expect(!refused.isEmpty && refused.allSatisfy { $0.status == 400 }, "\(head)")
            #expect(refused.first?.header("Connection")?.lowercased() == "close")
            #expect(!refused.map(\.text).contains { $0.contains("smuggled") })
        }
    }

    @Test("a request target in absolute form is answered as its path and query", arguments: [
        ("http://127.0.0.1/echo?value=abs", "echo:abs"), ("HTTPS://login.example.com:8443/echo?value=s", "echo:s"),
        ("http://x/page", "<p>hello</p>"),
    ])
    func absoluteForm(target: String, expected: String) throws {
        let answered = try answers("GET \(target) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(answered.map(\.status) == [200])
        #expect(answered.first?.text == expected)
    }

    @Test("an absolute-form target's path, and other targets left as they are")
    func targetPaths() {
        #expect(RequestHead.path(ofTarget: "/login?x=1") == "/login?x=1")
        #expect(RequestHead.path(ofTarget: "http://a.example/login") == "/login")
        #expect(RequestHead.path(ofTarget: "https://a.example:8443/a/b?c") == "/a/b?c")
        #expect(RequestHead.path(ofTarget: "http://a.example") == "/")
        #expect(RequestHead.path(ofTarget: "http://a.example?x=1") == "/")
        #expect(RequestHead.path(ofTarget: "*") == "*")
        #expect(RequestHead.path(ofTarget: "mailto:a@b") == "mailto:a@b")
        #expect(RequestHead.path(ofTarget: "http:/login") == "http:/login")
    }
}
