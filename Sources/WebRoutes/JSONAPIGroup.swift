import HTTPServer
import SignIn
import WebPresentation

/// The JSON API under `/api/`: errors as JSON, nothing cached (`no-store`), the sign-in endpoints rate-limited per
/// client, the rest behind a Bearer access token, and CORS for the origins in BRIDGE_CORS_ORIGINS.
package struct JSONAPIGroup: Sendable {
    package let group: RouteGroup
    package let rateLimit: SignInRateLimit
    package let bearer: BearerAuthentication
    package let cors: CORSPolicy

    package init(errors: ErrorMapping<JSONErrorPresenter>, rateLimit: SignInRateLimit, bearer: BearerAuthentication,
                 cors: CORSPolicy) {
        group = RouteGroup("json-api", owning: ["/api/"], Answers(errors: errors, cors: cors))
        self.rateLimit = rateLimit
        self.bearer = bearer
        self.cors = cors
    }

    /// An endpoint anyone may call; with `rateLimited`, at most so many calls per client address.
    package func endpoint(rateLimited: Bool = false, _ handler: @escaping Router.ReplyHandler) -> Router.Route {
        group.route(replying: rateLimited ? rateLimit.limiting(handler) : handler)
    }

    /// An endpoint for the holder of a valid access token.
    package func authenticated(_ handler: @escaping @Sendable (Request, AuthenticatedCaller) throws -> Reply) -> Router.Route {
        let bearer = bearer
        return group.route(replying: { request in try handler(request, try bearer.authenticate(request)) })
    }

    /// With CORS on, `OPTIONS` for every path of this group registered so far, allowing the methods registered
    /// there: the preflights follow the routes.
    package func addPreflights(to router: inout Router) {
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
    package struct Answers: RouteMiddleware {
        package let errors: ErrorMapping<JSONErrorPresenter>
        package let cors: CORSPolicy

        package init(errors: ErrorMapping<JSONErrorPresenter>, cors: CORSPolicy) {
            self.errors = errors
            self.cors = cors
        }

        package func respond(to request: Request, next: (Request) -> Reply) -> Reply {
            errors.respond(to: request, next: next).map { [cors] response in
                var response = response
                response.headers.set("Cache-Control", "no-store")
                cors.decorate(&response, for: request)
                return response
            }
        }
    }
}

extension JSONAPIGroup {
    /// The JSON API for apps, each route with its CORS preflight.
    package func register(on router: inout Router, _ native: NativeAPI) {
        router.add("POST", "/api/auth/nonce", endpoint(rateLimited: true, native.issueNonce))
        router.add("POST", "/api/auth/apple", endpoint(rateLimited: true, native.signIn))
        router.add("POST", "/api/auth/apple-login", endpoint(rateLimited: true, native.signIn))
        router.add("POST", "/api/auth/refresh", endpoint(rateLimited: true, native.refresh))
        router.add("POST", "/api/auth/logout", authenticated(native.logout))
        router.add("GET", "/api/me", authenticated(native.me))
        router.add("DELETE", "/api/me", authenticated(native.deleteMe))
        addPreflights(to: &router)  // last: one for every route above
    }
}
