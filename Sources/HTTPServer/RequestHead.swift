/// What RFC 9112 asks of a server about a request's head: its framing (`RequestFraming`), the Host header,
/// header names, and request targets in absolute form. Every request comes through here: the listener adds each
/// field as libmicrohttpd hands it over, on its bytes, then asks for `problem` once.
struct RequestHead {
    /// HTTP/1.1, where Host is required (libmicrohttpd answers any version but 1.0 and 1.1 itself).
    let isHTTP11: Bool
    private var invalidName = false
    private var foldedLine = false
    private var encodedNULInPath = false
    private var authorizations = 0
    private var hosts = 0
    private var host = ""
    private var framing = RequestFraming.Fields()

    init(isHTTP11: Bool) { self.isHTTP11 = isHTTP11 }

    /// One field. `name`: its name as received.
    mutating func add(name: UnsafeBufferPointer<UInt8>, value: String) {
        // Section 5.1: whitespace between a name and its colon gets a 400; section 2.2: so does whitespace before
        // the first field's name. libmicrohttpd keeps either in the name. (Other bytes that a token cannot hold are
        // left alone: no name this server reads has them.)
        if name.contains(where: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) {
            invalidName = true
        } else if ASCII.equalsIgnoringCase(name, "host") {
            hosts += 1
            host = value
        } else if ASCII.equalsIgnoringCase(name, "authorization") {
            authorizations += 1
        } else {
            framing.add(name: name, value: value)
        }
    }

    /// Section 5.2: a line continued on the next (obs-fold). libmicrohttpd cannot be asked to refuse or unfold it,
    /// and reads it wrongly, so the listener finds it and says so here.
    mutating func refuseFoldedLine() { foldedLine = true }

    /// An encoded NUL in the target's path: libmicrohttpd decodes the path into a C string, which ends there, so
    /// that `/metrics%00.txt` would be served as `/metrics` (and pass a front end's rules on paths or extensions).
    mutating func refuseEncodedNULInPath() { encodedNULInPath = true }

    /// Why the head must be refused (400, or 501 for a transfer coding the server does not implement), or nil.
    /// `closing`: the connection must close too, where a proxy in front may have read the request's end
    /// differently: ambiguous framing, or a name that is not a name (`Content-Length : 5`).
    func problem() -> (status: Int, message: String, closing: Bool)? {
        if foldedLine {
            return (400, "A header is continued on the next line (obs-fold), which RFC 9112 §5.2 no longer allows.", true)
        }
        if invalidName { return (400, "A header name holds whitespace (before its colon, or before the first header).", true) }
        if let (status, message) = framing.problem(isHTTP11: isHTTP11) { return (status, message, true) }
        // Section 3.2: 400 for an HTTP/1.1 request without Host, for any request with more than one, and for an
        // invalid one.
        if hosts > 1 { return (400, "The request has more than one Host header.", false) }
        if hosts == 0 && isHTTP11 { return (400, "The request has no Host header (required since HTTP/1.1).", false) }
        if hosts == 1 && !Self.isHost(host) { return (400, "The Host header is not a host name or address.", false) }
        if encodedNULInPath { return (400, "The request's path holds an encoded NUL (%00).", false) }
        // RFC 9110 §5.3: a field that is not a list may appear once; which of two credentials counts is a guess.
        if authorizations > 1 { return (400, "The request has more than one Authorization header.", false) }
        return nil
    }

    /// The same for fields already collected (tests and the fuzz target).
    static func problem(isHTTP11: Bool, headers: HTTPHeaders) -> (status: Int, message: String, closing: Bool)? {
        var head = RequestHead(isHTTP11: isHTTP11)
        headers.forEachField { head.add(name: $0, value: $1) }
        return head.problem()
    }

    /// The path of a request target: an absolute-form target (`http://host/path?query`, which Section 3.2.2 has a
    /// server accept) becomes its path, `/` when it has none; any other target is returned as it is.
    static func path(ofTarget target: String) -> String {
        let bytes = target.utf8
        guard bytes.first != UInt8(ascii: "/"), let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return target }
        let scheme = String(decoding: bytes[..<colon], as: UTF8.self).lowercased()
        guard scheme == "http" || scheme == "https" else { return target }
        let rest = bytes[bytes.index(after: colon)...]
        guard rest.starts(with: "//".utf8) else { return target }
        let authority = rest.dropFirst(2)
        guard let pathStart = authority.firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") }),
              authority[pathStart] == UInt8(ascii: "/") else { return "/" }
        return String(decoding: authority[pathStart...], as: UTF8.self)
    }

    /// `uri-host [":" port]` (RFC 3986): a registered name or an IPv4 address (unreserved characters,
    /// percent-encodings, sub-delims), or an IP literal in brackets; an empty value too, which Section 3.2 allows.
    static func isHost(_ value: String) -> Bool {
        var value = value
        return value.withUTF8 { bytes in
            var nameEnd = bytes.count
            if bytes.first == UInt8(ascii: "[") {
                guard let close = bytes.firstIndex(of: UInt8(ascii: "]")), close > 1,
                      bytes[1..<close].allSatisfy({ isHostByte($0) || $0 == UInt8(ascii: ":") }) else { return false }
                return close + 1 == bytes.count || isPort(bytes[(close + 1)...])
            }
            if let colon = bytes.lastIndex(of: UInt8(ascii: ":")) {
                guard isPort(bytes[colon...]) else { return false }
                nameEnd = colon
            }
            return bytes[..<nameEnd].allSatisfy(isHostByte)
        }
    }

    /// `":" *DIGIT`, the colon included (an empty port is allowed by RFC 3986).
    private static func isPort(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        bytes.first == UInt8(ascii: ":") && bytes.dropFirst().allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    /// A letter, a digit, or one of `-._~%!$&'()*+,;=` (unreserved, sub-delims, and `%` of an escape).
    private static func isHostByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "%"), UInt8(ascii: "!"),
             UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "*"),
             UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="):
            true
        default:
            false
        }
    }
}
