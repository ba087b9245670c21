/// One HTTP request, fully read. Values only: no socket behind it, so handlers are testable directly.
public struct Request: Sendable {
    public var method: String
    /// The decoded path without the query string.
    public var path: String
    public var query: FormFields
    public var headers: HTTPHeaders
    public var body: [UInt8]
    public var remoteAddress: String
    /// True when the request runs on an off-listener worker, where slow work is allowed (see
    /// `OffListenerRequired`); false on a listener thread.
    public var isOffListener = false
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
        self.body = body
        self.remoteAddress = remoteAddress
        self.peerIsTrustedProxy = ServerConfiguration.isLoopback(remoteAddress)
    }

    /// Cookies from every `Cookie` header; the first occurrence of a name wins.
    public var cookies: [String: String] {
        var result: [String: String] = [:]
        forEachCookie { name, value in
            if result[String(name)] == nil { result[String(name)] = String(value) }
            return true
        }
        return result
    }

    /// The first cookie called `name`, found without building the whole dictionary (a request usually asks for
    /// one or two).
    public func cookie(_ name: String) -> String? {
        var found: String?
        forEachCookie { candidate, value in
            guard candidate == name else { return true }
            found = String(value)
            return false
        }
        return found
    }

    /// Calls `body` with each cookie's name and (unquoted) value in order, until it returns false.
    private func forEachCookie(_ body: (Substring, Substring) -> Bool) {
        for header in headers.values("Cookie") {
            for part in header.split(separator: ";") {
                let trimmed = part.trimmingSpaces()
                guard let equals = trimmed.firstIndex(of: "=") else { continue }
                var value = Substring(trimmed[trimmed.index(after: equals)...])
                if value.count >= 2, value.first == "\"", value.last == "\"" { value = value.dropFirst().dropLast() }
                if !body(Substring(trimmed[..<equals]), value) { return }
            }
        }
    }

    /// The media type of the body without parameters, lowercased (`application/json`).
    public var mediaType: String? {
        guard let contentType = headers["Content-Type"] else { return nil }
        let type = contentType.split(separator: ";", maxSplits: 1).first.map { $0.trimmingSpaces() } ?? ""
        return type.isEmpty ? nil : type.lowercased()
    }

    /// The urlencoded form body, or nil when the body is not a form.
    public var formBody: FormFields? {
        guard mediaType == "application/x-www-form-urlencoded" else { return nil }
        return FormFields(urlEncoded: body)
    }

    /// The client's address. Behind a trusted reverse proxy (`peerIsTrustedProxy`) it is the address that proxy
    /// appended last to X-Forwarded-For; entries further left are client-supplied and never trusted.
    public var clientAddress: String {
        Self.clientAddress(peer: remoteAddress, trustedProxy: peerIsTrustedProxy, headers: headers)
    }

    static func clientAddress(peer: String, trustedProxy: Bool, headers: HTTPHeaders) -> String {
        guard trustedProxy, let forwarded = headers.values("X-Forwarded-For").last?.split(separator: ",").last
        else { return peer }
        let address = forwarded.trimmingSpaces()
        return address.isEmpty ? peer : String(address)
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
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return slice
    }
}
