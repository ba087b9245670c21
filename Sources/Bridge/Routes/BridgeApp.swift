import AppleID
import Foundation
import HTTPServer
import Storage

/// The application's route table: every route, in the group whose behaviour it takes, independent of sockets.
/// `CompositionRoot.compose` builds what the routes take.
public final class BridgeApp: Sendable {
    public let configuration: BridgeConfiguration
    let metrics: Metrics
    /// Apple's keys, whose fetches `/metrics` counts.
    let keys: JWKSCache
    /// The store, whose write retries `/metrics` counts.
    let store: any Store
    let groups: RouteGroups
    let endpoints: Endpoints
    let pages: Pages
    let logo: SiteLogo?
    let contentSecurityPolicy: String
    /// Every route, and which group each path belongs to.
    let router: Router

    init(configuration: BridgeConfiguration, metrics: Metrics, keys: JWKSCache, store: any Store, groups: RouteGroups,
         endpoints: Endpoints,
         pages: Pages, logo: SiteLogo?) {
        self.configuration = configuration
        self.metrics = metrics
        self.keys = keys
        self.store = store
        self.groups = groups
        self.endpoints = endpoints
        self.pages = pages
        self.logo = logo
        contentSecurityPolicy = ContentSecurityPolicy.header(allowingAppleJSSDK: configuration.useJSSDK)
        router = Self.routes(configuration, groups, endpoints, metrics, keys, store, logo)
    }

    /// The route table: each route is registered through its group, takes that group's behaviour, and puts its path
    /// in that group; a path no route takes belongs to the group owning its prefix (`/api/`, `/apple/`, `/oauth/`,
    /// `/public/`), else to the pages.
    static func routes(_ configuration: BridgeConfiguration, _ groups: RouteGroups, _ endpoints: Endpoints,
                       _ metrics: Metrics, _ keys: JWKSCache, _ store: any Store, _ logo: SiteLogo?) -> Router {
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
        router.add("POST", "/api/auth/nonce", api.endpoint(rateLimited: true, native.issueNonce))
        router.add("POST", "/api/auth/apple", api.endpoint(rateLimited: true, native.signIn))
        router.add("POST", "/api/auth/refresh", api.endpoint(rateLimited: true, native.refresh))
        router.add("POST", "/api/auth/logout", api.authenticated(native.logout))
        router.add("GET", "/api/me", api.authenticated(native.me))
        router.add("DELETE", "/api/me", api.authenticated(native.deleteMe))
        router.add("GET", "/healthz", operations.endpoint { _ in .json("{\"status\":\"ok\"}") })
        router.add("GET", "/metrics", operations.endpoint(requiringBearer: configuration.metricsToken) { [metrics, keys, store] _ in
            // PostgreSQL's writes run again after losing a race (none on SQLite): per sign-in, what instances cost each other.
            // And calls that gave up waiting for a row another transaction held (lock_timeout).
            let retries = store.writeRetries.map { ("bridge_store_write_retries_total{cause=\"\($0.cause)\"}", $0.count) }
                + (store.backendName == "postgres" ? [("bridge_store_lock_timeouts_total", store.lockTimeouts)] : [])
            var response = Response.text(metrics.prometheusText(extra: [("bridge_jwks_fetches_total", keys.fetches)] + retries))
            response.headers.set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            return response
        })
        if let logo, logo.served != nil { router.add("GET", SiteLogo.servedPath, operations.endpoint(logo.respond)) }
        addOpenIDProviderRoutes(to: &router, groups.openIDProvider, endpoints, issuer: configuration.publicURL)
        router.addPrefix("GET", "/public/", operations.endpoint { [staticFiles = endpoints.staticFiles] in try staticFiles.respond(to: $0) })
        api.addPreflights(to: &router)  // last: one for every JSON API route above
        return router
    }

    /// The application behind the listener: the routes, with the browser security headers and HSTS around them.
    public func makeResponder() -> some HTTPResponder {
        let browserHeaders = SecurityHeaders(router, contentSecurityPolicy: contentSecurityPolicy,
                                             sessionCookieNames: [configuration.cookieNames.session])
        return StrictTransportSecurity(browserHeaders, isEnabled: configuration.isHTTPS)
    }

    /// The listener's own refusals (413, 400, 429, 503), answered by the group the path belongs to (JSON under
    /// `/api/` and `/apple/`, RFC 6749 JSON under `/oauth/`, plain text for the operational routes, else a page) and
    /// with the same security headers as every other answer. A page's words come from the catalogs in the default
    /// language: the listener answers before the request is handed on.
    public var refusalResponse: MicroHTTPDListener.Refusal {
        let (router, policy, isHTTPS) = (router, contentSecurityPolicy, configuration.isHTTPS)
        return { path, status, message in
            var response = router.group(owning: path).refusal(HTTPError(status, message), for: path)
            if response.isHTML { SecurityHeaders<Router>.addBrowserHeaders(to: &response.headers, contentSecurityPolicy: policy) }
            if isHTTPS { response.headers.set("Strict-Transport-Security", StrictTransportSecurity<Router>.headerValue) }
            return response
        }
    }
}
