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

    public init(name: String, value: String, path: String = "/", maxAge: Int? = nil,
                secure: Bool = true, httpOnly: Bool = true, sameSite: SameSite = .lax) {
        self.name = name
        self.value = value
        self.path = path
        self.maxAge = maxAge
        self.secure = secure
        self.httpOnly = httpOnly
        self.sameSite = sameSite
    }

    /// A cookie that tells the browser to forget `name` at `path`.
    public static func expired(_ name: String, path: String = "/", sameSite: SameSite = .lax) -> Cookie {
        Cookie(name: name, value: "", path: path, maxAge: 0, sameSite: sameSite)
    }

    /// Appended to one string: an array of parts joined cost a sign-in (two cookies) nearly 2 % of its instructions.
    public var headerValue: String {
        var header = ""
        header.reserveCapacity(name.utf8.count + value.utf8.count + path.utf8.count + 64)
        header += name
        header += "="
        header += value
        header += "; Path="
        header += path
        if let maxAge {
            header += "; Max-Age="
            header += String(maxAge)
        }
        if secure || sameSite == .none { header += "; Secure" }
        if httpOnly { header += "; HttpOnly" }
        header += "; SameSite="
        header += sameSite.rawValue
        return header
    }
}
