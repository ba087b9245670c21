import HTTPServer

/// The JSON API: errors as JSON, nothing cached (`no-store`), the sign-in endpoints rate-limited per client, the
/// rest behind a Bearer access token, and CORS for the origins in BRIDGE_CORS_ORIGINS.
struct JSONAPIGroup: Sendable {
    let errors: ErrorMapping<JSONErrorPresenter>
    let rateLimit: SignInRateLimit
    let bearer: BearerAuthentication
    let cors: CORSPolicy

    /// An endpoint anyone may call; with `rateLimited`, at most so many calls per client address.
    func endpoint(rateLimited: Bool = false, _ handler: @escaping Router.Handler) -> Router.Handler {
        let rateLimit = rateLimit
        return jsonEndpoint { request in
            // The rest of a suspended request (this admission's, or the handler's own) runs in place of the handler.
            if let rest = request.takeResumedWork() { return try rest() }
            // A request run again off the listener (it calls Apple) was admitted on the listener already.
            guard rateLimited && !request.isOffListener else { return try handler(request) }
            return try rateLimit.admitting(request) { try handler(request) }
        }
    }

    /// An endpoint for the holder of a valid access token.
    func authenticated(_ handler: @escaping @Sendable (Request, AuthenticatedCaller) throws -> Response) -> Router.Handler {
        let bearer = bearer
        return jsonEndpoint { request in
            // After a suspension the rest of the work runs as it was: the token may name a session it just ended.
            if let rest = request.takeResumedWork() { return try rest() }
            return try handler(request, try bearer.authenticate(request))
        }
    }

    /// `OPTIONS` of a path whose endpoints take `methods`: a CORS preflight.
    func preflight(allowing methods: [String]) -> Router.Handler {
        let cors = cors
        return jsonEndpoint { request in try cors.preflight(request, methods: methods) }
    }

    private func jsonEndpoint(_ handler: @escaping Router.Handler) -> Router.Handler {
        { [errors, cors] request in
            var response = try errors.respond(to: request, with: handler)
            response.headers.set("Cache-Control", "no-store")
            cors.decorate(&response, for: request)
            return response
        }
    }
}
