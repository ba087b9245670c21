import HTTPServer

/// The JSON API under `/api/`: errors as JSON, nothing cached (`no-store`), the sign-in endpoints rate-limited per
/// client, the rest behind a Bearer access token, and CORS for the origins in BRIDGE_CORS_ORIGINS.
struct JSONAPIGroup: Sendable {
    let group: RouteGroup
    let rateLimit: SignInRateLimit
    let bearer: BearerAuthentication
    let cors: CORSPolicy

    init(errors: ErrorMapping<JSONErrorPresenter>, rateLimit: SignInRateLimit, bearer: BearerAuthentication, cors: CORSPolicy) {
        group = RouteGroup("json-api", owning: ["/api/"], Answers(errors: errors, cors: cors))
        self.rateLimit = rateLimit
        self.bearer = bearer
        self.cors = cors
    }

    /// An endpoint anyone may call; with `rateLimited`, at most so many calls per client address.
    func endpoint(rateLimited: Bool = false, _ handler: @escaping Router.ReplyHandler) -> Router.Route {
        let rateLimit = rateLimit
        return group.route(replying: { request in
            guard rateLimited else { return try handler(request) }
            return rateLimit.admitting(request) { try handler(request) }
        })
    }

    /// An endpoint for the holder of a valid access token.
    func authenticated(_ handler: @escaping @Sendable (Request, AuthenticatedCaller) throws -> Reply) -> Router.Route {
        let bearer = bearer
        return group.route(replying: { request in try handler(request, try bearer.authenticate(request)) })
    }

    /// With CORS on, `OPTIONS` for every path of this group registered so far, allowing the methods registered
    /// there: the preflights follow the routes.
    func addPreflights(to router: inout Router) {
        guard cors.isEnabled else { return }
        var paths: [String] = []
        var methods: [String: [String]] = [:]
        for registration in router.registrations where registration.group === group && !registration.isPrefix {
            if methods[registration.path] == nil { paths.append(registration.path) }
            methods[registration.path, default: []].append(registration.method)
        }
        let cors = cors
        for path in paths {
            let allowed = methods[path] ?? []
            router.add("OPTIONS", path, group.route { request in try cors.preflight(request, methods: allowed) })
        }
    }

    /// Around every answer: JSON errors, `no-store`, and the CORS headers.
    struct Answers: RouteMiddleware {
        let errors: ErrorMapping<JSONErrorPresenter>
        let cors: CORSPolicy

        func respond(to request: Request, next: (Request) -> Reply) -> Reply {
            errors.respond(to: request, next: next).map { [cors] response in
                var response = response
                response.headers.set("Cache-Control", "no-store")
                cors.decorate(&response, for: request)
                return response
            }
        }
    }
}
