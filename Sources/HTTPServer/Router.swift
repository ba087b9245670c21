/// Routes by exact path and method, then by path prefix. Unknown path: 404; known path, other method: 405.
public struct Router: HTTPResponder {
    public typealias Handler = @Sendable (Request) throws -> Response

    private var exact: [String: [String: Handler]] = [:]
    private var prefixes: [(prefix: String, method: String, handler: Handler)] = []
    private var notFound: Handler = { _ in throw HTTPError(404, "There is no page at this address.") }

    public init() {}

    public mutating func add(_ method: String, _ path: String, _ handler: @escaping Handler) {
        exact[path, default: [:]][method] = handler
        if method == "GET" && exact[path]?["HEAD"] == nil {
            exact[path, default: [:]]["HEAD"] = handler
        }
    }

    public mutating func add(_ method: String, _ path: String, _ responder: some HTTPResponder) {
        add(method, path) { try responder.respond(to: $0) }
    }

    /// Handles every path starting with `prefix` (e.g. `/public/`).
    public mutating func addPrefix(_ method: String, _ prefix: String, _ handler: @escaping Handler) {
        prefixes.append((prefix, method, handler))
    }

    public mutating func setNotFound(_ handler: @escaping Handler) { notFound = handler }

    public func respond(to request: Request) throws -> Response {
        if let byMethod = exact[request.path] {
            if let handler = byMethod[request.method] { return try handler(request) }
            throw HTTPError.methodNotAllowed(allowing: byMethod.keys)
        }
        let matching = prefixes.filter { request.path.hasPrefix($0.prefix) }
        if let route = matching.first(where: { $0.method == request.method || ($0.method == "GET" && request.method == "HEAD") }) {
            return try route.handler(request)
        }
        if !matching.isEmpty { throw HTTPError.methodNotAllowed(allowing: matching.map(\.method)) }
        return try notFound(request)
    }
}
