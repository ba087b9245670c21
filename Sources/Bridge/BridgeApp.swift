import AppleID
import BridgeMetrics
import BridgeSettings
import Foundation
import HTTPServer
import Storage
import WebPresentation
import WebRoutes

/// The application's route table: every route, in the group whose behaviour it takes, independent of sockets.
/// `CompositionRoot.compose` builds what the routes take.
public final class BridgeApp: Sendable {
    public let configuration: BridgeConfiguration
    package let metrics: Metrics
    /// What `/metrics` samples when scraped (Apple's keys and call guard, the revocation backlog, write retries).
    package let operational: OperationalMetrics
    package let groups: RouteGroups
    package let endpoints: Endpoints
    package let pages: Pages
    package let logo: SiteLogo?
    package let contentSecurityPolicy: String
    /// Every route, and which group each path belongs to.
    package let router: Router
    /// `bridge_http_request_duration_seconds` of each route (`Router.metricsRoutes`), made once.
    package let requestDurations: [String: HistogramSeries]

    package init(configuration: BridgeConfiguration, metrics: Metrics, operational: OperationalMetrics, groups: RouteGroups,
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
    package static func routes(_ configuration: BridgeConfiguration, _ groups: RouteGroups, _ endpoints: Endpoints,
                               _ metrics: Metrics, _ operational: OperationalMetrics, _ logo: SiteLogo?) -> Router {
        var router = Router(fallback: groups.web.group)
        groups.web.register(on: &router, login: endpoints.login, sessions: endpoints.sessionPages, invitations: endpoints.invitations)
        groups.appleCallbacks.register(on: &router, redirect: endpoints.appleRedirect, notifications: endpoints.appleNotifications,
                                       androidRelay: endpoints.androidRelay)
        groups.api.register(on: &router, endpoints.nativeAPI)
        groups.forwardAuth.register(on: &router, endpoints.forwardAuth)
        groups.openIDProvider.register(on: &router, issuer: configuration.publicURL, authorization: endpoints.providerAuthorization,
                                       logout: endpoints.providerLogout, tokens: endpoints.providerTokens,
                                       userinfo: endpoints.providerUserinfo)
        groups.operations.register(on: &router, metricsToken: configuration.metricsToken, metrics: metrics, operational: operational,
                                   logo: logo, staticFiles: endpoints.staticFiles)
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
