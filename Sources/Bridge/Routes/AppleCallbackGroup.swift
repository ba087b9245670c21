import HTTPServer

/// What Apple sends back: the form_post a browser carries to the callback (a person sees the answer, so errors are
/// pages, and every refusal is counted and logged), and Apple's server-to-server notifications (JSON, no-store).
struct AppleCallbackGroup: Sendable {
    let pageErrors: ErrorMapping<WebErrorPresenter>
    let jsonErrors: ErrorMapping<JSONErrorPresenter>
    let metrics: Metrics
    let logger: Logger

    /// The callback: fields from a urlencoded body, or from the query string of a bodiless POST (how an app's
    /// webview hands over a native sign-in's result).
    func formPost(_ handler: @escaping @Sendable (Request, FormFields) throws -> Response) -> Router.Handler {
        let (metrics, logger) = (metrics, logger)
        return { [pageErrors] request in
            try pageErrors.respond(to: request) { request in
                // Run again once the sign-in's write committed, the rest of the work answers, as in the other groups:
                // the first pass checked the cookies and parsed the body (about 3 % of a sign-in's instructions).
                let rest = request.takeResumedWork()
                // Two binding cookies of one name: one was planted, and either might sign this browser in.
                if rest == nil, CookieNames.duplicated(in: request) != nil { throw PageRefusal.duplicateCookie }
                do {
                    if let rest { return try rest() }
                    return try handler(request, try Self.callbackFields(request))
                } catch {
                    if let refusal = WebErrorPresenter.describe(error) {
                        metrics.increment("bridge_callback_rejections_total", ["reason": refusal.reasonCode])
                        logger.warning("sign_in_rejected", ["reason": refusal.reasonCode, "status": String(refusal.status)])
                    }
                    throw error
                }
            }
        }
    }

    /// A server-to-server notification.
    func notification(_ handler: @escaping Router.Handler) -> Router.Handler {
        { [jsonErrors] request in
            var response = try jsonErrors.respond(to: request, with: handler)
            response.headers.set("Cache-Control", "no-store")
            return response
        }
    }

    static func callbackFields(_ request: Request) throws -> FormFields {
        if request.body.isEmpty { return request.query }
        guard let form = request.formBody else {
            throw HTTPError(415, "Apple's answer must be sent as a form (application/x-www-form-urlencoded).")
        }
        return form
    }
}
