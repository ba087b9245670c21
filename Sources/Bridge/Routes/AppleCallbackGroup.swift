import HTTPServer

/// What Apple sends back: the form_post a browser carries to the callback (a person sees the answer, so errors are
/// pages, and every refusal is counted and logged), and Apple's server-to-server notifications under `/apple/`
/// (JSON, no-store).
struct AppleCallbackGroup: Sendable {
    let callbacks: RouteGroup
    let notifications: RouteGroup

    init(pages: PageAnswers, jsonErrors: ErrorMapping<JSONErrorPresenter>, metrics: Metrics, logger: Logger) {
        callbacks = RouteGroup("apple-callback", CountedRefusals(pages: pages, metrics: metrics, logger: logger))
        notifications = RouteGroup("apple-notifications", owning: ["/apple/"], NotificationAnswers(errors: jsonErrors))
    }

    /// The callback: fields from a urlencoded body, or from the query string of a bodiless POST (how an app's
    /// webview hands over a native sign-in's result).
    func formPost(_ handler: @escaping @Sendable (Request, FormFields) throws -> Response) -> Router.Route {
        callbacks.route { request in
            // Two binding cookies of one name: one was planted, and either might sign this browser in.
            if CookieNames.duplicated(in: request) != nil { throw PageRefusal.duplicateCookie }
            return try handler(request, try Self.callbackFields(request))
        }
    }

    /// The Android relay (`POST /apple/android/<package>`): Apple's form_post, answered as the callback is (a person's
    /// Custom Tab shows the answer), its fields from a urlencoded body only. Registered as a prefix, it makes this group
    /// own `/apple/android/`, inside `/apple/` of the notifications: the router's and the listener's refusals there
    /// are pages too.
    func relayPost(_ handler: @escaping @Sendable (Request, FormFields) throws -> Response) -> Router.Route {
        callbacks.route { request in
            if request.body.isEmpty { return try handler(request, FormFields()) }
            guard let form = request.formBody else {
                throw HTTPError(415, "Apple's answer must be sent as a form (application/x-www-form-urlencoded).")
            }
            return try handler(request, form)
        }
    }

    /// A server-to-server notification.
    func notification(_ handler: @escaping Router.Handler) -> Router.Route { notifications.route(handler) }

    static func callbackFields(_ request: Request) throws -> FormFields {
        if request.body.isEmpty { return request.query }
        guard let form = request.formBody else {
            throw HTTPError(415, "Apple's answer must be sent as a form (application/x-www-form-urlencoded).")
        }
        return form
    }

    /// The callback's answers: pages, with every refusal of a sign-in counted and logged (the rest of a resumed
    /// sign-in's refusals too).
    struct CountedRefusals: RouteMiddleware {
        let pages: PageAnswers
        let metrics: Metrics
        let logger: Logger

        func respond(to request: Request, next: (Request) throws -> Response) throws -> Response {
            try pages.respond(to: request) { request in
                do {
                    return try next(request)
                } catch let suspended as RequestSuspended {
                    throw suspended  // every sign-in's, and no refusal: not worth describe's four casts
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

    struct NotificationAnswers: RouteMiddleware {
        let errors: ErrorMapping<JSONErrorPresenter>

        func respond(to request: Request, next: (Request) throws -> Response) throws -> Response {
            var response = try errors.respond(to: request, next: next)
            response.headers.set("Cache-Control", "no-store")
            return response
        }
    }
}
