import HTTPServer
import Testing

/// The client behind a trusted proxy is the last X-Forwarded-For entry that proxy appended.
@Suite("The client address behind a trusted proxy")
struct ClientAddressTests {
    static func request(forwardedFor values: [String], peer: String = "127.0.0.1") -> Request {
        var request = Request(method: "GET", path: "/", headers: HTTPHeaders(values.map { ("X-Forwarded-For", $0) }),
                              remoteAddress: peer)
        request.peerIsTrustedProxy = true
        return request
    }

    @Test("the last non-empty entry of the last field, without the spaces around it", arguments: [
        (["198.51.100.7"], "198.51.100.7"),
        (["198.51.100.7, 203.0.113.9"], "203.0.113.9"),
        (["198.51.100.7,203.0.113.9"], "203.0.113.9"),
        (["203.0.113.9 ,"], "203.0.113.9"),
        (["203.0.113.9,,"], "203.0.113.9"),
        (["\t203.0.113.9  "], "203.0.113.9"),
        (["198.51.100.7", "203.0.113.9"], "203.0.113.9"),
        (["2001:db8::1, ::ffff:192.0.2.1"], "::ffff:192.0.2.1"),
    ])
    func lastEntry(values: [String], expected: String) {
        #expect(Self.request(forwardedFor: values).clientAddress == expected)
    }

    @Test("the peer itself when the last field has no entry, or only spaces", arguments: [[""], [","], [",,"], [" , "], ["198.51.100.7", ""]])
    func noEntry(values: [String]) {
        #expect(Self.request(forwardedFor: values, peer: "127.0.0.2").clientAddress == "127.0.0.2")
    }

    @Test("the peer itself when the peer is not a trusted proxy")
    func untrustedPeer() {
        var request = Self.request(forwardedFor: ["203.0.113.9"], peer: "192.0.2.50")
        request.peerIsTrustedProxy = false
        #expect(request.clientAddress == "192.0.2.50")
    }
}
