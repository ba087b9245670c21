import TextBytes

/// Routes by exact path and method, then by path prefix. Unknown path: 404; known path, other method: 405.
/// Paths, prefixes and methods are compared as UTF-8 bytes: Swift's `String` comparisons are canonical equivalence
/// over Characters, so `/api/` followed by a combining mark would not start with `/api/`, and a path written with
/// another character that is canonically the same (KELVIN SIGN for `K`) would equal a registered one.
///
/// Every answer, the router's own 404 and 405 included, runs inside the middleware of the group the path belongs
/// to (`group(owning:)`), and so does whatever of a `Reply` follows later (off the listener, after a commit).
public struct Router: HTTPResponder {
    /// A handler that answers now.
    public typealias Handler = @Sendable (Request) throws -> Response
    /// A handler whose answer may follow off the listener, or after work elsewhere (see `Reply`).
    public typealias ReplyHandler = @Sendable (Request) throws -> Reply

    /// A handler in the group whose middleware answers around it (see `RouteGroup.route(_:)`).
    public struct Route: Sendable {
        public let group: RouteGroup
        let handler: ReplyHandler
    }

    /// One registration, as made (the HEAD implied by a GET is not listed).
    public struct Registration: Sendable {
        public let method: String
        /// The exact path, or with `isPrefix` the prefix.
        public let path: String
        public let isPrefix: Bool
        public let group: RouteGroup
    }

    /// The routes of one exact path; the path belongs to the group of the first one registered.
    private struct PathRoutes {
        let path: String
        let group: RouteGroup
        var byMethod: [String: Route] = [:]
    }

    private var exact: [String: PathRoutes] = [:]
    private var prefixRoutes: [(prefix: String, method: String, route: Route)] = []
    /// The prefixes groups own, longest first.
    private var owners: [(prefix: String, group: RouteGroup)] = []
    /// Every registration, in order: what is derived from the routes (the JSON API's CORS preflights) reads it.
    public private(set) var registrations: [Registration] = []
    /// The group of every path that no route takes and no group's prefix covers.
    public let fallback: RouteGroup

    public init(fallback: RouteGroup = RouteGroup("unrouted", NoMiddleware())) {
        self.fallback = fallback
    }

    public mutating func add(_ method: String, _ path: String, _ route: Route) {
        claim(route.group)
        registrations.append(Registration(method: method, path: path, isPrefix: false, group: route.group))
        if let owner = exact[path]?.group {
            precondition(owner === route.group, "\(path) is in group \(owner.name), not \(route.group.name)")
            precondition(exact[path]?.path.hasSameUTF8(as: path) == true, "\(path) is registered in another spelling")
        }
        exact[path, default: PathRoutes(path: path, group: route.group)].byMethod[method] = route
        if method == "GET" && exact[path]?.byMethod["HEAD"] == nil {
            exact[path]?.byMethod["HEAD"] = route
        }
    }

    /// A route with no middleware of its own, in the fallback group.
    public mutating func add(_ method: String, _ path: String, _ handler: @escaping Handler) {
        add(method, path, fallback.route(handler))
    }

    /// Handles every path starting with `prefix` (e.g. `/public/`), which then belongs to the route's group.
    public mutating func addPrefix(_ method: String, _ prefix: String, _ route: Route) {
        claim(route.group)
        registrations.append(Registration(method: method, path: prefix, isPrefix: true, group: route.group))
        prefixRoutes.append((prefix, method, route))
        own(prefix, route.group)
    }

    public mutating func addPrefix(_ method: String, _ prefix: String, _ handler: @escaping Handler) {
        addPrefix(method, prefix, fallback.route(handler))
    }

    /// The group a path belongs to: that of the routes registered for it, else that of the longest prefix owned,
    /// else the fallback. Answers the router's 404 and 405, and the listener's refusals (413, 429, 503).
    public func group(owning path: String) -> RouteGroup {
        if let routes = exactRoutes(path) { return routes.group }
        return owners.first { path.utf8.starts(with: $0.prefix.utf8) }?.group ?? fallback
    }

    /// What a path is counted under in metrics: its registered path, else the prefix whose route takes it, else
    /// `other`; never the path itself, which the client chooses.
    public func metricsRoute(for path: String) -> String {
        if let routes = exactRoutes(path) { return routes.path }
        return prefixRoutes.first { path.utf8.starts(with: $0.prefix.utf8) }?.prefix ?? Self.otherMetricsRoute
    }

    /// Every value `metricsRoute(for:)` can give, once each (a prefix may be registered for several methods).
    public var metricsRoutes: Set<String> {
        Set(exact.keys).union(prefixRoutes.map(\.prefix)).union([Self.otherMetricsRoute])
    }

    public static let otherMetricsRoute = "other"


    public func respond(to request: Request) -> Reply {
        let (group, handler) = resolve(request)
        return group.middleware.respond(to: request) { request in Reply(catching: { try handler(request) }) }
    }

    private func resolve(_ request: Request) -> (RouteGroup, ReplyHandler) {
        if let routes = exactRoutes(request.path) {
            // Two ASCII texts are canonically equal only when their bytes are; a method is an ASCII token.
            if request.method.utf8.allSatisfy({ $0 < 0x80 }), let route = routes.byMethod[request.method] {
                return (route.group, route.handler)
            }
            let refusal = HTTPError.methodNotAllowed(allowing: routes.byMethod.keys)
            return (routes.group, { _ in throw refusal })
        }
        let matching = prefixRoutes.filter { request.path.utf8.starts(with: $0.prefix.utf8) }
        if let match = matching.first(where: {
            $0.method.hasSameUTF8(as: request.method) || ($0.method == "GET" && request.method.hasSameUTF8(as: "HEAD"))
        }) {
            return (match.route.group, match.route.handler)
        }
        if !matching.isEmpty {
            let refusal = HTTPError.methodNotAllowed(allowing: matching.map(\.method))
            return (matching[0].route.group, { _ in throw refusal })
        }
        return (group(owning: request.path), { _ in throw HTTPError(404, "There is no page at this address.") })
    }

    /// The routes registered for exactly this path, byte for byte (the dictionary finds canonically equal keys too).
    private func exactRoutes(_ path: String) -> PathRoutes? {
        guard let routes = exact[path], routes.path.hasSameUTF8(as: path) else { return nil }
        return routes
    }

    /// Takes the prefixes `group` owns, the first time one of its routes is registered.
    private mutating func claim(_ group: RouteGroup) {
        for prefix in group.prefixes { own(prefix, group) }
    }

    private mutating func own(_ prefix: String, _ group: RouteGroup) {
        if let owner = owners.first(where: { $0.prefix.hasSameUTF8(as: prefix) })?.group {
            precondition(owner === group, "\(prefix) is owned by group \(owner.name), not \(group.name)")
            return
        }
        owners.append((prefix, group))
        owners.sort { $0.prefix.utf8.count > $1.prefix.utf8.count }
    }
}
