import AppleID
import Foundation
import HTTPServer
import Storage

/// The application's route table: every route, in the group whose behaviour it takes, independent of sockets.
/// `CompositionRoot.compose` builds what the routes take.
public final class BridgeApp: Sendable {
    public let configuration: BridgeConfiguration
    let metrics: Metrics
    /// What `/metrics` samples when scraped (Apple's keys and call guard, the revocation backlog, write retries).
    let operational: OperationalMetrics
    let groups: RouteGroups
    let endpoints: Endpoints
    let pages: Pages
    let logo: SiteLogo?
    let contentSecurityPolicy: String
    /// Every route, and which group each path belongs to.
    let router: Router
    /// `bridge_http_request_duration_seconds` of each route (`Router.metricsRoutes`), made once.
    let requestDurations: [String: HistogramSeries]

    init(configuration: BridgeConfiguration, metrics: Metrics, operational: OperationalMetrics, groups: RouteGroups,
         endpoints: Endpoints, pages: Pages, logo: SiteLogo?) {
        self.configuration = configuration
        self.metrics = metrics
        self.operational = operational
        self.groups = groups
        self.endpoints = endpoints
        self.pages = pages
        self.logo = logo
        contentSecurityPolicy = ContentSecurityPolicy.header()
        router = Self.routes(configuration, groups, endpoints, metrics, operational, logo)
        requestDurations = Dictionary(uniqueKeysWithValues: router.metricsRoutes.map { route in
            (route, metrics.series("bridge_http_request_duration_seconds", ["route": route]))
        })
    }

    /// The route table: each route is registered through its group, takes that group's behaviour, and puts its path
    /// in that group; a path no route takes belongs to the group owning its prefix (`/api/`, `/apple/`, `/oauth/`,
    /// `/public/`, `/auth/`), else to the pages.
    static func routes(_ configuration: BridgeConfiguration, _ groups: RouteGroups, _ endpoints: Endpoints,
                       _ metrics: Metrics, _ operational: OperationalMetrics, _ logo: SiteLogo?) -> Router {
        let (web, api, apple, operations) = (groups.web, groups.api, groups.appleCallbacks, groups.operations)
        let (login, redirect, session, native) = (endpoints.login, endpoints.appleRedirect, endpoints.sessionPages, endpoints.nativeAPI)
        var router = Router(fallback: web.group)
        router.add("GET", "/", web.page { _ in .redirect(to: "/login") })
        router.add("GET", "/login", web.page(visiting: login.show))
        router.add("GET", "/session", web.signedIn(session.show))
        router.add("POST", "/logout", web.signedIn(csrfRefusal: .signOutNotFromThisSite, csrfMismatch: session.confirmSignOut,
                                                   signedOut: session.logoutWithoutSession, session.logout))
        router.add("POST", "/account/delete", web.signedIn(csrfRefusal: .deletionNotFromThisSite, session.deleteAccount))
        router.add("POST", "/apple_redirect", apple.formPost(redirect.finish))
        router.add("POST", "/apple/notifications", apple.notification(endpoints.appleNotifications.receive))
        router.addPrefix("POST", BridgeConfiguration.androidRelayPathPrefix, apple.relayPost(endpoints.androidRelay.relay))
        router.add("POST", "/api/auth/nonce", api.endpoint(rateLimited: true, native.issueNonce))
        router.add("POST", "/api/auth/apple", api.endpoint(rateLimited: true, native.signIn))
        router.add("POST", "/api/auth/apple-login", api.endpoint(rateLimited: true, native.signIn))
        router.add("POST", "/api/auth/refresh", api.endpoint(rateLimited: true, native.refresh))
        router.add("POST", "/api/auth/logout", api.authenticated(native.logout))
        router.add("GET", "/api/me", api.authenticated(native.me))
        router.add("DELETE", "/api/me", api.authenticated(native.deleteMe))
        router.add("GET", "/invite", web.page(endpoints.invitations.open))
        router.add("GET", "/auth/verify", groups.forwardAuth.endpoint(endpoints.forwardAuth.verify))
        router.add("GET", "/healthz", operations.endpoint { _ in .json("{\"status\":\"ok\"}") })
        router.add("GET", "/metrics", operations.endpoint(requiringBearer: configuration.metricsToken) { [metrics, operational] _ in
            var response = Response.text(metrics.prometheusText(collected: operational.samples()))
            response.headers.set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            return response
        })
        if let logo, logo.served != nil { router.add("GET", SiteLogo.servedPath, operations.endpoint(logo.respond)) }
        addOpenIDProviderRoutes(to: &router, groups.openIDProvider, endpoints, issuer: configuration.publicURL)
        router.addPrefix("GET", "/public/", operations.endpoint { [staticFiles = endpoints.staticFiles] in try staticFiles.respond(to: $0) })
        api.addPreflights(to: &router)  // last: one for every JSON API route above
        return router
    }

    /// Counts a finished request in `bridge_http_request_duration_seconds`, under its route (never its raw path).
    public func recordRequest(path: String, seconds: Double) {
        // A registered path is its own route: one dictionary lookup for nearly every request.
        let series = requestDurations[path] ?? requestDurations[router.metricsRoute(for: path)]
        series?.record(seconds)
    }

    /// The application behind the listener: the routes, with the browser security headers and HSTS around them.
    public func makeResponder() -> some HTTPResponder {
        let browserHeaders = SecurityHeaders(router, contentSecurityPolicy: contentSecurityPolicy,
                                             sessionCookieNames: [configuration.cookieNames.session])
        return StrictTransportSecurity(browserHeaders, isEnabled: configuration.isHTTPS)
    }

    /// The listener's own refusals (413, 400, 429, 503), answered by the group the path belongs to (JSON under
    /// `/api/` and `/apple/`, a page under `/apple/android/`, RFC 6749 JSON under `/oauth/`, plain text for the operational routes, else a page) and
    /// with the same security headers as every other answer. A page's words come from the catalogs in the default
    /// language: the listener answers before the request is handed on.
    public var refusalResponse: MicroHTTPDListener.Refusal {
        let (router, policy, isHTTPS) = (router, contentSecurityPolicy, configuration.isHTTPS)
        return { path, status, message in
            var response = router.group(owning: path).refusal(HTTPError(status, message), for: path)
            SecurityHeaders<Router>.addContentHeaders(to: &response.headers, isHTML: response.isHTML,
                                                      hasBody: !response.body.isEmpty, contentSecurityPolicy: policy)
            if isHTTPS { response.headers.set("Strict-Transport-Security", StrictTransportSecurity<Router>.headerValue) }
            return response
        }
    }
}
