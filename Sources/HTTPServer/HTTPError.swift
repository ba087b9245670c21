/// An error that carries the HTTP status a client should see, and a message safe to show.
public struct HTTPError: Error, Sendable, CustomStringConvertible {
    public var status: Int
    public var message: String
    public var headers: HTTPHeaders

    public init(_ status: Int, _ message: String, headers: HTTPHeaders = HTTPHeaders()) {
        self.status = status
        self.message = message
        self.headers = headers
    }

    public var description: String { "\(status) \(message)" }

    /// A 405 that names the methods the address accepts (`Allow` is required on every 405); GET implies HEAD.
    public static func methodNotAllowed<Methods: Sequence<String>>(allowing methods: Methods) -> HTTPError {
        var allowed = Set(methods)
        if allowed.contains("GET") { allowed.insert("HEAD") }
        return HTTPError(405, "This address does not accept that method.",
                         headers: HTTPHeaders([("Allow", allowed.sorted().joined(separator: ", "))]))
    }

    /// This error as a plain-text response that keeps every header the error carries (`Allow`, `Retry-After`,
    /// `WWW-Authenticate`). Anything that renders an `HTTPError` its own way must copy `headers` too.
    public var plainTextResponse: Response {
        var response = Response.text(message + "\n", status: status)
        for field in headers { response.headers.add(field.name, field.value) }
        return response
    }

    public static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 303: "See Other"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 409: "Conflict"
        case 410: "Gone"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        default: "Status \(status)"
        }
    }
}
