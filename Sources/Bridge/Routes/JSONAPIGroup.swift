import HTTPServer

/// The JSON API: errors as JSON, nothing cached (`no-store`), the sign-in endpoints rate-limited per client, and
/// the rest behind a Bearer access token.
struct JSONAPIGroup: Sendable {
    let errors: ErrorMapping<JSONErrorPresenter>
    let rateLimit: SignInRateLimit
    let bearer: BearerAuthentication

    /// An endpoint anyone may call; with `rateLimited`, at most so many calls per client address.
    func endpoint(rateLimited: Bool = false, _ handler: @escaping Router.Handler) -> Router.Handler {
        let rateLimit = rateLimit
        return jsonEndpoint { request in
            // A request run again off the listener (it calls Apple) was admitted on the listener already.
            if rateLimited && !request.isOffListener { try rateLimit.admit(request) }
            return try handler(request)
        }
    }

    /// An endpoint for the holder of a valid access token.
    func authenticated(_ handler: @escaping @Sendable (Request, AuthenticatedCaller) throws -> Response) -> Router.Handler {
        let bearer = bearer
        return jsonEndpoint { request in try handler(request, try bearer.authenticate(request)) }
    }

    private func jsonEndpoint(_ handler: @escaping Router.Handler) -> Router.Handler {
        { [errors] request in
            var response = try errors.respond(to: request, with: handler)
            response.headers.set("Cache-Control", "no-store")
            return response
        }
    }
}
