import Foundation
@testable import HTTPServer
import Testing
import TestSupport

/// Sends `raw` on one connection and returns every response the server wrote before closing it.
func responses(port: Int, raw: String) throws -> [RawHTTPResponse] {
    let fd = try RawHTTPClient.connect(port: port)
    defer { close(fd) }
    RawHTTPClient.sendAll(fd, Array(raw.utf8))
    var data = RawHTTPClient.readAll(fd)[...]
    var result: [RawHTTPResponse] = []
    // Split on status lines: each answer here is small and has a Content-Length.
    while let start = data.firstRange(of: Array("HTTP/1.1 ".utf8)) {
        let rest = data[start.upperBound...]
        let next = rest.firstRange(of: Array("HTTP/1.1 ".utf8))?.lowerBound ?? data.endIndex
        result.append(try RawHTTPClient.parse(Array(data[start.lowerBound..<next])))
        data = data[next...]
    }
    return result
}

@Suite("Request smuggling is refused", .serialized)
struct SmugglingTests {
    static let smuggled = "GET /echo?value=smuggled HTTP/1.1\r\nHost: x\r\n\r\n"

    /// The request is answered with 400 and `Connection: close`, and nothing after it is answered.
    /// `ownMessage`: the answer is this server's (libmicrohttpd refuses some malformed lengths on its own, and
    /// version 0.9.75 writes the head of that answer twice; either way the smuggled request is not answered).
    func expectRefusedAndClosed(_ head: String, body: String, ownMessage: String? = nil, status: Int = 400) throws {
        try withServer(responder: testRouter()) { server in
            let answers = try responses(port: server.port, raw: head + "\r\n" + body + Self.smuggled)
            let statuses = answers.map(\.status)
            #expect(!statuses.isEmpty && statuses.allSatisfy { $0 == status }, "\(head)")
            #expect(answers.first?.header("Connection")?.lowercased() == "close")
            let texts = answers.map(\.text)
            #expect(!texts.contains { $0.contains("smuggled") })
            if let ownMessage {
                #expect(answers.count == 1)
                #expect(answers.first?.text == ownMessage + "\n")
            }
        }
    }

    @Test("two different Content-Length headers: 400, connection closed, leftover bytes not answered")
    func conflictingLengths() throws {
        try expectRefusedAndClosed("POST /form HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                                   + "Content-Length: 6\r\nContent-Length: 60\r\n", body: "name=a",
                                   ownMessage: "The request has more than one Content-Length header.")
    }

    @Test("two equal Content-Length headers are refused too")
    func equalLengths() throws {
        try expectRefusedAndClosed("POST /form HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\nContent-Length: 6\r\n", body: "name=a",
                                   ownMessage: "The request has more than one Content-Length header.")
    }

    @Test("a Content-Length that is not a plain decimal is refused", arguments: ["+6", "0x6", "6,6", "6 6", "-1", "6a"])
    func malformedLength(value: String) throws {
        try expectRefusedAndClosed("POST /form HTTP/1.1\r\nHost: x\r\nContent-Length: \(value)\r\n", body: "name=a")
    }

    @Test("the framing check itself refuses what a proxy could read differently")
    func framingRules() {
        #expect(RequestFraming.problem(in: HTTPHeaders([("Content-Length", "6")])) == nil)
        #expect(RequestFraming.problem(in: HTTPHeaders([("Transfer-Encoding", "chunked")])) == nil)
        for value in ["+6", "0x6", "6,6", "6 6", "-1", "", "1234567890123456789"] {
            let problem = RequestFraming.problem(in: HTTPHeaders([("content-length", value)]))
            #expect(problem != nil, "\(value)")
        }
        #expect(RequestFraming.problem(in: HTTPHeaders([("Content-Length", "6"), ("content-length", "6")])) != nil)
        #expect(RequestFraming.problem(in: HTTPHeaders([("Content-Length", "0"), ("Transfer-Encoding", "gzip")])) != nil)
    }

    @Test("Content-Length together with Transfer-Encoding is refused")
    func lengthAndChunked() throws {
        try expectRefusedAndClosed("POST /form HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n",
                                   body: "6\r\nname=a\r\n0\r\n\r\n",
                                   ownMessage: "The request has both Content-Length and Transfer-Encoding.")
    }

    @Test("a Transfer-Encoding that does not end in chunked, once, is refused at once with 400, not read to the end")
    func transferCodingsNotEndingInChunked() throws {
        let chunkedBody = "6\r\nname=a\r\n0\r\n\r\n"
        for codings in ["gzip", "chunked, identity", "chunked, chunked", "Chunked\r\nTransfer-Encoding: chunked", ""] {
            try expectRefusedAndClosed("POST /form HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: \(codings)\r\n", body: chunkedBody,
                                       ownMessage: "The request's Transfer-Encoding does not end in chunked, once.")
        }
    }

    @Test("a transfer coding before chunked is answered 501 and the connection closed: the server cannot undo it")
    func unimplementedTransferCoding() throws {
        try expectRefusedAndClosed("POST /form HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n",
                                   body: "6\r\nname=a\r\n0\r\n\r\n",
                                   ownMessage: "The server only takes request bodies sent chunked or with a length.",
                                   status: 501)
    }

    @Test("an HTTP/1.0 request with a Transfer-Encoding is refused: its framing is faulty (RFC 9112, 6.1)")
    func transferEncodingInHTTP10() throws {
        try expectRefusedAndClosed("POST /form HTTP/1.0\r\nHost: x\r\nTransfer-Encoding: chunked\r\n",
                                   body: "6\r\nname=a\r\n0\r\n\r\n",
                                   ownMessage: "An HTTP/1.0 request cannot have a Transfer-Encoding.")
    }

    @Test("a chunked body in any letter case is read")
    func chunkedAnyCase() throws {
        try withServer(responder: testRouter()) { server in
            let head = "POST /form HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                + "Transfer-Encoding: Chunked\r\nConnection: close\r\n\r\n6\r\nname=a\r\n0\r\n\r\n"
            let answers = try responses(port: server.port, raw: head)
            #expect(answers.map(\.status) == [200])
            #expect(answers.first?.text == "name=a|size=6")
        }
    }

    @Test("a well-framed request on a kept-alive connection is followed by the next one")
    func keepAliveStillWorks() throws {
        try withServer(responder: testRouter()) { server in
            let first = "POST /form HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                + "Content-Length: 6\r\n\r\nname=a"
            let last = "GET /echo?value=second HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            let answers = try responses(port: server.port, raw: first + last)
            #expect(answers.map(\.status) == [200, 200])
            #expect(answers.last?.text == "echo:second")
        }
    }

    @Test("a header continued on the next line (obs-fold) is refused with 400 and the connection closed",
          arguments: [" 0", "\t0", "  more"])
    func obsFold(continuation: String) throws {
        try expectRefusedAndClosed("POST /form HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                                   + "Content-Length: 6\r\n\(continuation)\r\n", body: "name=a",
                                   ownMessage: "A header is continued on the next line (obs-fold), which RFC 9112 §5.2 no longer allows.")
    }

    @Test("a folded line that lengthens another header's name is refused too, not read as that name")
    func obsFoldOnAnyHeader() throws {
        try expectRefusedAndClosed("GET /echo?value=first HTTP/1.1\r\nHost: x\r\nX-Note: a\r\n b\r\n", body: "",
                                   ownMessage: "A header is continued on the next line (obs-fold), which RFC 9112 §5.2 no longer allows.")
    }

    @Test("whitespace before the first header's name is refused (RFC 9112 §2.2)")
    func whitespaceBeforeFirstName() throws {
        try expectRefusedAndClosed("GET /echo?value=first HTTP/1.1\r\n Host: x\r\n", body: "")
    }

    @Test("an encoded NUL in the path is refused with 400, not served as the path before it",
          arguments: ["/echo%00.txt", "/echo%00", "/page%00/x.js"])
    func encodedNULInPath(path: String) throws {
        try withServer(responder: testRouter()) { server in
            let answer = try RawHTTPClient.request(port: server.port, path: path + "?value=nul")
            #expect(answer.status == 400)
            #expect(!answer.text.contains("echo:") && !answer.text.contains("hello"))
            #expect(answer.text == "The request's path holds an encoded NUL (%00).\n")
            let plain = try RawHTTPClient.request(port: server.port, path: "/echo?value=a%00b")
            #expect(plain.status == 200)
        }
    }

    @Test("two Authorization headers are refused with 400: neither is chosen")
    func twoAuthorizationHeaders() throws {
        try withServer(responder: testRouter()) { server in
            let answers = try responses(port: server.port, raw: "GET /echo?value=x HTTP/1.1\r\nHost: x\r\n"
                                        + "Authorization: Bearer one\r\nAuthorization: Bearer two\r\nConnection: close\r\n\r\n")
            #expect(answers.map(\.status) == [400])
            #expect(answers.first?.text == "The request has more than one Authorization header.\n")
            let one = try RawHTTPClient.request(port: server.port, path: "/echo?value=y", headers: [("Authorization", "Bearer one")])
            #expect(one.status == 200)
        }
    }
}
