import BridgeMetrics
import BridgeSettings
import HTTPServer
import Logging
import WebPresentation

/// What Apple sends back: the form_post a browser carries to the callback (a person sees the answer, so errors are
/// pages, and every refusal is counted and logged), and Apple's server-to-server notifications under `/apple/`
/// (JSON, no-store).
package struct AppleCallbackGroup: Sendable {
    package let callbacks: RouteGroup
    package let notifications: RouteGroup
    /// The Android relay's form_post: a person's Custom Tab shows the answer, so pages here too, inside `/apple/`.
    /// Its refusals are logged, not counted as the callback's: nobody signs in at the relay.
    package let androidRelay: RouteGroup

    package init(pages: PageAnswers, jsonErrors: ErrorMapping<JSONErrorPresenter>, metrics: Metrics, logger: Logger) {
        callbacks = RouteGroup("apple-callback", CountedRefusals(pages: pages, metrics: metrics, logger: logger))
        notifications = RouteGroup("apple-notifications", owning: ["/apple/"], NeverStoredAnswers(errors: jsonErrors))
        androidRelay = RouteGroup("android-relay", owning: [BridgeConfiguration.androidRelayPathPrefix],
                                  CountedRefusals(pages: pages, metrics: metrics, logger: logger,
                                                  metric: nil, event: "android_relay_refused"))
    }

    /// The callback: fields from a urlencoded body, or from the query string of a bodiless POST (how an app's
    /// webview hands over a native sign-in's result).
    package func formPost(_ handler: @escaping @Sendable (Request, FormFields) throws -> Reply) -> Router.Route {
        callbacks.route(replying: { request in
            // Two binding cookies of one name: one was planted, and either might sign this browser in.
            if CookieNames.duplicated(among: request.sentCookies) != nil { throw PageRefusal.duplicateCookie }
            return try handler(request, try Self.callbackFields(request))
        })
    }

    /// The Android relay (`POST /apple/android/<package>`): Apple's form_post, its fields from a urlencoded body only.
    /// Its group owns `/apple/android/`, inside the notifications' `/apple/`: the router's and the listener's refusals
    /// there are pages too.
    package func relayPost(_ handler: @escaping @Sendable (Request, FormFields) throws -> Reply) -> Router.Route {
        androidRelay.route(replying: { request in
            if request.body.isEmpty { return try handler(request, FormFields()) }
            guard let form = request.formBody else {
                throw HTTPError(415, "Apple's answer must be sent as a form (application/x-www-form-urlencoded).")
            }
            return try handler(request, form)
        })
    }

    /// A server-to-server notification.
    package func notification(_ handler: @escaping Router.ReplyHandler) -> Router.Route { notifications.route(replying: handler) }

    package static func callbackFields(_ request: Request) throws -> FormFields {
        if request.body.isEmpty { return request.query }
        guard let form = request.formBody else {
            throw HTTPError(415, "Apple's answer must be sent as a form (application/x-www-form-urlencoded).")
        }
        return form
    }

    /// The callback's answers: pages, with every refusal of a sign-in counted and logged (those of the part of a
    /// sign-in that follows after its commit, or off the listener, too).
    package struct CountedRefusals: RouteMiddleware {
        package let pages: PageAnswers
        package let metrics: Metrics
        package let logger: Logger
        /// The counter of refusals, by reason; nil: only logged.
        package var metric: String?
        package var event: String

        package init(pages: PageAnswers, metrics: Metrics, logger: Logger, metric: String? = "bridge_callback_rejections_total",
                     event: String = "sign_in_rejected") {
            self.pages = pages
            self.metrics = metrics
            self.logger = logger
            self.metric = metric
            self.event = event
        }

        package func respond(to request: Request, next: (Request) -> Reply) -> Reply {
            let (metrics, logger, metric, event) = (metrics, logger, metric, event)
            return pages.respond(to: request) { request in
                next(request).recover { error in
                    if let refusal = WebErrorPresenter.describe(error) {
                        if let metric { metrics.increment(metric, ["reason": refusal.reasonCode]) }
                        logger.warning(event, ["reason": refusal.reasonCode, "status": String(refusal.status)])
                    }
                    throw error
                }
            }
        }
    }
}

extension AppleCallbackGroup {
    /// What Apple posts: the web callback, server-to-server notifications, and the Android relay's callbacks.
    package func register(on router: inout Router, redirect: AppleRedirect, notifications: AppleNotifications,
                          androidRelay: AndroidRelay) {
        router.add("POST", "/apple_redirect", formPost(redirect.finish))
        router.add("POST", "/apple/notifications", notification(notifications.receive))
        router.addPrefix("POST", BridgeConfiguration.androidRelayPathPrefix, relayPost(androidRelay.relay))
    }
}
