import TextBytes

/// One HTTP response value.
public struct Response: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public init(status: Int = 200, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public var bodyText: String { String(decoding: body, as: UTF8.self) }

    public static func html(_ html: String, status: Int = 200) -> Response {
        Response(status: status, headers: HTTPHeaders([("Content-Type", "text/html; charset=utf-8")]), body: Array(html.utf8))
    }

    public static func text(_ text: String, status: Int = 200) -> Response {
        Response(status: status, headers: HTTPHeaders([("Content-Type", "text/plain; charset=utf-8")]), body: Array(text.utf8))
    }

    public static func json(_ json: String, status: Int = 200) -> Response {
        Response(status: status, headers: HTTPHeaders([("Content-Type", "application/json")]), body: Array(json.utf8))
    }

    public static func redirect(to location: String, status: Int = 303) -> Response {
        Response(status: status, headers: HTTPHeaders([("Location", location)]))
    }

    public var isHTML: Bool { headers["Content-Type"]?.utf8.starts(with: "text/html".utf8) ?? false }

    public mutating func setCookie(_ cookie: Cookie) { headers.add("Set-Cookie", cookie.headerValue) }
}

/// A `Set-Cookie` value.
public struct Cookie: Sendable, Equatable {
    public enum SameSite: String, Sendable { case strict = "Strict", lax = "Lax", none = "None" }

    public var name: String
    public var value: String
    public var path: String = "/"
    public var maxAge: Int?
    public var secure = true
    public var httpOnly = true
    public var sameSite: SameSite = .lax
    /// Nil: the cookie goes back to this host only. Set, to that domain and every host under it.
    public var domain: String?

    public init(name: String, value: String, path: String = "/", maxAge: Int? = nil,
                secure: Bool = true, httpOnly: Bool = true, sameSite: SameSite = .lax, domain: String? = nil) {
        self.name = name
        self.domain = domain
        self.value = value
        self.path = path
        self.maxAge = maxAge
        self.secure = secure
        self.httpOnly = httpOnly
        self.sameSite = sameSite
    }

    /// A cookie that tells the browser to forget `name` at `path`.
    public static func expired(_ name: String, path: String = "/", sameSite: SameSite = .lax, domain: String? = nil) -> Cookie {
        Cookie(name: name, value: "", path: path, maxAge: 0, sameSite: sameSite, domain: domain)
    }

    /// Written as bytes into one string of the right size: appending eleven parts to a `String` cost a sign-in
    /// (two cookies) over 1 % of its instructions.
    public var headerValue: String {
        let maxAgeText = maxAge.map { String($0) }
        let secureFlag = secure || sameSite == .none
        var count = name.utf8.count + 1 + value.utf8.count + 7 + path.utf8.count + 11 + sameSite.rawValue.utf8.count
        if let maxAgeText { count += 10 + maxAgeText.utf8.count }
        if let domain { count += 9 + domain.utf8.count }
        if secureFlag { count += 8 }
        if httpOnly { count += 10 }
        return String(unsafeUninitializedCapacity: count) { buffer in
            var text = UTF8Writer(buffer)
            text.write(name)
            text.write("=" as StaticString)
            text.write(value)
            text.write("; Path=" as StaticString)
            text.write(path)
            if let domain {
                text.write("; Domain=" as StaticString)
                text.write(domain)
            }
            if let maxAgeText {
                text.write("; Max-Age=" as StaticString)
                text.write(maxAgeText)
            }
            if secureFlag { text.write("; Secure" as StaticString) }
            if httpOnly { text.write("; HttpOnly" as StaticString) }
            text.write("; SameSite=" as StaticString)
            text.write(sameSite.rawValue)
            return text.count
        }
    }
}
