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
    let groups: RouteGroups
    let endpoints: Endpoints
    let pages: Pages
    let logo: SiteLogo?
    let contentSecurityPolicy: String

    init(configuration: BridgeConfiguration, metrics: Metrics, keys: JWKSCache, groups: RouteGroups, endpoints: Endpoints,
         pages: Pages, logo: SiteLogo?) {
        self.configuration = configuration
        self.metrics = metrics
        self.keys = keys
        self.groups = groups
        self.endpoints = endpoints
        self.pages = pages
        self.logo = logo
        contentSecurityPolicy = ContentSecurityPolicy.header(allowingAppleJSSDK: configuration.useJSSDK)
    }

    /// The route table: each route is registered in its group and takes that group's behaviour.
    public func makeResponder() -> some HTTPResponder {
        let (web, api, apple, operations) = (groups.web, groups.api, groups.appleCallbacks, groups.operations)
        let (login, redirect, session, native) = (endpoints.login, endpoints.appleRedirect, endpoints.sessionPages, endpoints.nativeAPI)
        var router = Router()
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
        if groups.api.cors.isEnabled {
            let apiMethods = [("/api/auth/nonce", ["POST"]), ("/api/auth/apple", ["POST"]), ("/api/auth/refresh", ["POST"]),
                              ("/api/auth/logout", ["POST"]), ("/api/me", ["GET", "DELETE"])]
            for (path, methods) in apiMethods { router.add("OPTIONS", path, api.preflight(allowing: methods)) }
        }
        router.add("GET", "/healthz", operations.endpoint { _ in .json("{\"status\":\"ok\"}") })
        router.add("GET", "/metrics", operations.endpoint(requiringBearer: configuration.metricsToken) { [metrics, keys] _ in
            var response = Response.text(metrics.prometheusText(extra: [("bridge_jwks_fetches_total", keys.fetches)]))
            response.headers.set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            return response
        })
        if let logo, logo.served != nil { router.add("GET", SiteLogo.servedPath, operations.endpoint(logo.respond)) }
        addOpenIDProviderRoutes(to: &router)
        router.addPrefix("GET", "/public/", operations.endpoint { [staticFiles = endpoints.staticFiles] in try staticFiles.respond(to: $0) })
        let unrouted = UnroutedRequests(router: router, pageErrors: groups.pageErrors, jsonErrors: groups.jsonErrors,
                                        plainTextErrors: groups.plainTextErrors, languages: pages.catalogs.negotiation)
        let browserHeaders = SecurityHeaders(unrouted, contentSecurityPolicy: contentSecurityPolicy,
                                             sessionCookieNames: [configuration.cookieNames.session])
        return StrictTransportSecurity(browserHeaders, isEnabled: configuration.isHTTPS)
    }

    /// The listener's own refusals (413, 400, 429, 503), shaped like every other error and with the same security
    /// headers; their words come from the catalogs like every page's (in the default language: the listener answers
    /// before the request's headers are read).
    public var refusalResponse: MicroHTTPDListener.Refusal {
        let (pages, policy, isHTTPS) = (pages, contentSecurityPolicy, configuration.isHTTPS)
        return { path, status, message in
            var response: Response
            if UnroutedRequests.isJSONPath(path) {
                response = JSONErrorPresenter.Body(status: status, code: HTTPErrorCode.code(for: status), message: message).response
            } else {
                let code = switch status {
                case 413: "body_too_large"
                case 503: "server_busy"
                case 429: "too_many_requests"
                default: "request_refused"
                }
                response = WebErrorPresenter(pages: pages).page(.init(status: status, reasonCode: code, action: .signIn))
                if response.isHTML {
                    SecurityHeaders<Router>.addBrowserHeaders(to: &response.headers, contentSecurityPolicy: policy)
                }
            }
            if isHTTPS { response.headers.set("Strict-Transport-Security", StrictTransportSecurity<Router>.headerValue) }
            return response
        }
    }
}
