/// What RFC 9112 asks of a server about a request's head beyond its framing (`RequestFraming`): the Host header,
/// header names, and request targets in absolute form.
enum RequestHead {
    /// Why the head must be answered with 400, or nil. `closing`: the connection must close too, since a name that
    /// is not a name (`Content-Length : 5`) may be read as another header by a proxy in front.
    static func problem(isHTTP11: Bool, headers: HTTPHeaders) -> (message: String, closing: Bool)? {
        var hosts: [String] = []
        for field in headers {
            guard isToken(field.name) else {
                return ("A header name has a space or a character that a header name cannot have.", true)
            }
            if HTTPHeaders.sameName(field.name, "Host") { hosts.append(field.value) }
        }
        // Section 3.2: 400 for an HTTP/1.1 request without Host, for any request with more than one, and for an
        // invalid one.
        if hosts.count > 1 { return ("The request has more than one Host header.", false) }
        if hosts.isEmpty && isHTTP11 { return ("The request has no Host header (required since HTTP/1.1).", false) }
        if let host = hosts.first, !isHost(host) { return ("The Host header is not a host name or address.", false) }
        return nil
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

    /// RFC 9110's token: one or more of `!#$%&'*+-.^_`|~`, digits and letters.
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "A")...UInt8(ascii: "Z"):
                true
            default:
                "!#$%&'*+-.^_`|~".utf8.contains(byte)
            }
        }
    }

    /// `uri-host [":" port]` (RFC 3986): a registered name or an IPv4 address (unreserved characters,
    /// percent-encodings, sub-delims), or an IP literal in brackets; an empty value too, which Section 3.2 allows.
    static func isHost(_ value: String) -> Bool {
        var host = Substring(value)
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return false }
            let literal = host[host.index(after: host.startIndex)..<close]
            guard !literal.isEmpty, literal.utf8.allSatisfy({ isHostByte($0) || $0 == UInt8(ascii: ":") }) else { return false }
            host = host[host.index(after: close)...]
            return host.isEmpty || isPort(host)
        }
        if let colon = host.lastIndex(of: ":") {
            guard isPort(host[colon...]) else { return false }
            host = host[..<colon]
        }
        return host.utf8.allSatisfy(isHostByte)
    }

    private static func isHostByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
            true
        default:
            "-._~%!$&'()*+,;=".utf8.contains(byte)
        }
    }

    /// `":" *DIGIT`, the colon included (an empty port is allowed by RFC 3986).
    private static func isPort(_ text: Substring) -> Bool {
        text.first == ":" && text.utf8.dropFirst().allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }
}
