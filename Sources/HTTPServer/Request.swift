import TextBytes

/// One HTTP request, fully read. Values only: no socket behind it, so handlers are testable directly.
public struct Request: Sendable {
    public var method: String
    /// The decoded path without the query string.
    public var path: String
    public var query: FormFields
    public var headers: HTTPHeaders {
        didSet { sentCookies = Self.cookies(in: headers) }
    }
    /// Every cookie of every `Cookie` header, in order, duplicates included: split once when the headers are set,
    /// since a sign-in asks for one cookie or another about eight times.
    public private(set) var sentCookies: [(name: String, value: String)]
    public var body: [UInt8]
    public var remoteAddress: String
    /// Whether the peer is a proxy whose X-Forwarded-For is believed. The listener sets it from
    /// `ServerConfiguration.trustsForwardedFor` when the request carries X-Forwarded-For (else it does not
    /// matter and stays false); a request made in code trusts a loopback peer.
    public var peerIsTrustedProxy: Bool

    public init(method: String, path: String, query: FormFields = FormFields(),
                headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [], remoteAddress: String = "127.0.0.1") {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.sentCookies = Self.cookies(in: headers)
        self.body = body
        self.remoteAddress = remoteAddress
        self.peerIsTrustedProxy = ServerConfiguration.isLoopback(remoteAddress)
    }

    /// Cookies from every `Cookie` header; the first occurrence of a name wins.
    public var cookies: [String: String] {
        var result: [String: String] = [:]
        for (name, value) in sentCookies where result[name] == nil { result[name] = value }
        return result
    }

    /// The first cookie called `name`, its name compared as bytes (RFC 6265 names are tokens; `==` would compare
    /// them as Characters).
    public func cookie(_ name: String) -> String? {
        sentCookies.first { $0.name.hasSameUTF8(as: name) }?.value
    }

    /// The name of every cookie the request carries, in order, duplicates included.
    public var sentCookieNames: [String] { sentCookies.map(\.name) }

    /// Each cookie's name and (unquoted) value, in order. Splits on bytes: splitting the header as Swift
    /// Characters was a measurable share of a sign-in's CPU.
    static func cookies(in headers: HTTPHeaders) -> [(name: String, value: String)] {
        var cookies: [(name: String, value: String)] = []
        for field in headers.fields where HTTPHeaders.sameName(field.name, "Cookie") {
            var header = field.value
            header.withUTF8 { bytes in
                forEachCookie(in: bytes) { name, value in
                    cookies.append((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
                }
            }
        }
        return cookies
    }

    private static func forEachCookie(in bytes: UnsafeBufferPointer<UInt8>,
                                      _ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Void) {
        func isSpace(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        var start = 0
        while start < bytes.count {
            var end = start
            while end < bytes.count, bytes[end] != UInt8(ascii: ";") { end += 1 }
            var first = start, last = end
            while first < last, isSpace(bytes[first]) { first += 1 }
            while last > first, isSpace(bytes[last - 1]) { last -= 1 }
            if let equals = bytes[first..<last].firstIndex(of: UInt8(ascii: "=")) {
                var valueStart = equals + 1, valueEnd = last
                if valueEnd - valueStart >= 2, bytes[valueStart] == UInt8(ascii: "\""), bytes[valueEnd - 1] == UInt8(ascii: "\"") {
                    valueStart += 1
                    valueEnd -= 1
                }
                body(UnsafeBufferPointer(rebasing: bytes[first..<equals]), UnsafeBufferPointer(rebasing: bytes[valueStart..<valueEnd]))
            }
            start = end + 1
        }
    }

    /// The media type of the body without parameters, lowercased (`application/json`).
    public var mediaType: String? {
        guard var contentType = headers["Content-Type"] else { return nil }
        // On bytes for the ASCII header every client sends (it is read once or twice per request); anything else
        // the Unicode-aware way.
        let ascii = contentType.withUTF8 { bytes -> String?? in
            guard let type = Self.asciiMediaType(in: bytes) else { return .none }
            guard !type.isEmpty else { return .some(nil) }
            return .some(String(decoding: type.map(Self.lowercasedASCII), as: UTF8.self))
        }
        if let ascii { return ascii }
        let type = contentType.split(separator: ";", maxSplits: 1).first.map { $0.trimmingSpaces() } ?? ""
        return type.isEmpty ? nil : type.lowercased()
    }

    /// Whether `mediaType` is `lowercasedType`, compared in place on the header's bytes (no lowercased copy) for
    /// the ASCII header every client sends.
    public func hasMediaType(_ lowercasedType: StaticString) -> Bool {
        guard var contentType = headers["Content-Type"] else { return false }
        let answer = contentType.withUTF8 { bytes -> Bool? in
            guard let type = Self.asciiMediaType(in: bytes) else { return nil }
            // A loop over indices: a lazy map's `elementsEqual` took about 400 instructions for a form's type.
            return lowercasedType.withUTF8Buffer { wanted in
                guard type.count == wanted.count else { return false }
                var index = type.startIndex
                for byte in wanted {
                    guard Self.lowercasedASCII(type[index]) == byte else { return false }
                    index += 1
                }
                return true
            }
        }
        return answer ?? (mediaType == lowercasedType.description)
    }

    /// The type of an ASCII Content-Type value: before any `;`, without surrounding spaces or tabs, as written.
    /// Nil when the value is not ASCII.
    private static func asciiMediaType(in bytes: UnsafeBufferPointer<UInt8>) -> Slice<UnsafeBufferPointer<UInt8>>? {
        guard !bytes.contains(where: { $0 >= 0x80 }) else { return nil }
        var start = 0, end = bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.count
        while start < end, bytes[start] == UInt8(ascii: " ") || bytes[start] == UInt8(ascii: "\t") { start += 1 }
        while end > start, bytes[end - 1] == UInt8(ascii: " ") || bytes[end - 1] == UInt8(ascii: "\t") { end -= 1 }
        return bytes[start..<end]
    }

    private static func lowercasedASCII(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte }

    /// The urlencoded form body, or nil when the body is not a form.
    public var formBody: FormFields? {
        guard hasMediaType("application/x-www-form-urlencoded") else { return nil }
        return FormFields(urlEncoded: body)
    }

    /// The client's address. Behind a trusted reverse proxy (`peerIsTrustedProxy`) it is the address that proxy
    /// appended last to X-Forwarded-For; entries further left are client-supplied and never trusted.
    public var clientAddress: String {
        Self.clientAddress(peer: remoteAddress, trustedProxy: peerIsTrustedProxy, headers: headers)
    }

    static func clientAddress(peer: String, trustedProxy: Bool, headers: HTTPHeaders) -> String {
        guard trustedProxy else { return peer }
        return forwardedClient(peer: peer,
                               lastField: headers.fields.last { HTTPHeaders.sameName($0.name, "X-Forwarded-For") }?.value)
    }

    /// The last entry a trusted proxy appended to the last X-Forwarded-For field; `peer` when there is none.
    static func forwardedClient(peer: String, lastField: String?) -> String {
        guard let field = lastField, let forwarded = lastNonEmptyEntry(of: field) else { return peer }
        let address = forwarded.trimmingSpaces()
        return address.isEmpty ? peer : String(address)
    }

    /// What `value.split(separator: ",").last` is, without building the array of every entry: the last
    /// non-empty one, nil when there is none.
    static func lastNonEmptyEntry(of value: String) -> Substring? {
        var rest = Substring(value)
        while let comma = rest.lastIndex(of: ",") {
            let entry = rest[rest.index(after: comma)...]
            if !entry.isEmpty { return entry }
            rest = rest[..<comma]
        }
        return rest.isEmpty ? nil : rest
    }

    public var bearerToken: String? {
        guard let value = headers["Authorization"] else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingSpaces()
        return token.isEmpty ? nil : String(token)
    }
}

extension StringProtocol {
    func trimmingSpaces() -> Substring {
        var slice = Substring(self)
        // The usual value has neither at either end; then the Character-by-Character walk below is skipped.
        let plainEnds = slice.utf8.first.map { $0 != 0x20 && $0 != 0x09 } ?? true
            && slice.utf8.last.map { $0 != 0x20 && $0 != 0x09 } ?? true
        if plainEnds { return slice }
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return slice
    }
}
