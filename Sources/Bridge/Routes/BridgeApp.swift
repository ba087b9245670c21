import AppleID
import Foundation
import HTTPServer
import Storage

/// The application: every route, in the group whose behaviour it takes, independent of sockets.
public final class BridgeApp: Sendable {
    public let configuration: BridgeConfiguration
    public let store: any Store
    public let apple: AppleServices
    public let metrics: Metrics
    /// Who a request comes from, believing `X-Forwarded-For` only from BRIDGE_TRUSTED_PROXIES.
    let clientAddresses: ClientAddresses
    let groups: RouteGroups
    let endpoints: Endpoints
    let pages: Pages
    let logo: SiteLogo?
    let contentSecurityPolicy: String
    /// Every route, and which group each path belongs to.
    let router: Router

    public var keys: JWKSCache { apple.keys }
    public var verifier: IdentityTokenVerifier { apple.verifier }
    /// Nil unless APPLE_TEAM_ID, APPLE_KEY_ID and APPLE_PRIVATE_KEY_PATH are set.
    public var clientSecrets: ClientSecretProvider? { apple.clientSecrets }

    /// Use `CompositionRoot` (through `BridgeServer`) rather than this: it opens the store and builds `apple`.
    init(configuration: BridgeConfiguration, store: any Store, apple: AppleServices, resourcesDirectory: String,
         clock: WallClock, logger: Logger, signInRequestsPerMinute: Int) throws {
        guard let secretKey = configuration.secretKey else { throw ConfigurationError("BRIDGE_SECRET_KEY", "is missing") }
        let secrets = try ServerSecrets(secretKey: secretKey)
        let metrics = Metrics()
        let clientAddresses = ClientAddresses(trustedProxies: configuration.trustedProxies)
        let logo = try SiteLogo.load(configuration.site.logoPath, publicDirectory: resourcesDirectory + "/Public")
        let pages = try Pages(directory: resourcesDirectory + "/Templates", devMode: configuration.mode == .development,
                              branding: Branding(siteName: configuration.site.siteName, logoURL: logo?.url))
        let providerKeys = try ProviderKeyRing(store: store, sealingKey: secrets.providerKeySealingKey, clock: clock)
        let services = SharedServices(configuration: configuration, store: store, apple: apple, secrets: secrets,
                                      clock: clock, logger: logger, metrics: metrics, pages: pages,
                                      rateLimit: SignInRateLimit(perMinute: signInRequestsPerMinute, store: store, clock: clock,
                                                                 clientAddresses: clientAddresses),
                                      providerKeys: providerKeys,
                                      exchangeRetrier: Self.exchangeRetrier(configuration, store, apple, secrets, metrics, logger))
        self.configuration = configuration
        self.store = store
        self.apple = apple
        self.metrics = metrics
        self.clientAddresses = clientAddresses
        let groups = RouteGroups(services)
        let endpoints = try Endpoints(services, publicDirectory: resourcesDirectory + "/Public")
        self.groups = groups
        self.endpoints = endpoints
        self.pages = pages
        self.logo = logo
        contentSecurityPolicy = ContentSecurityPolicy.header(allowingAppleJSSDK: configuration.useJSSDK)
        router = Self.routes(configuration, groups, endpoints, metrics, apple.keys, logo)
    }

    /// Retries exchanges a sign-in went on without; none when the exchange is required (or impossible).
    static func exchangeRetrier(_ configuration: BridgeConfiguration, _ store: any Store, _ apple: AppleServices,
                                _ secrets: ServerSecrets, _ metrics: Metrics, _ logger: Logger) -> CodeExchangeRetrier? {
        guard !configuration.requireCodeExchange, let client = apple.tokenClient else { return nil }
        return CodeExchangeRetrier(client: client, store: store, vault: AppleTokenVault(key: secrets.appleTokenKey),
                                   metrics: metrics, logger: logger)
    }

    /// The route table: each route is registered through its group, takes that group's behaviour, and puts its path
    /// in that group; a path no route takes belongs to the group owning its prefix (`/api/`, `/apple/`, `/oauth/`,
    /// `/public/`), else to the pages.
    static func routes(_ configuration: BridgeConfiguration, _ groups: RouteGroups, _ endpoints: Endpoints,
                       _ metrics: Metrics, _ keys: JWKSCache, _ logo: SiteLogo?) -> Router {
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
        router.add("GET", "/metrics", operations.endpoint(requiringBearer: configuration.metricsToken) { [metrics, keys] _ in
            var response = Response.text(metrics.prometheusText(extra: [("bridge_jwks_fetches_total", keys.fetches)]))
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

    /// Whether a connection's peer is a trusted reverse proxy (BRIDGE_TRUSTED_PROXIES), for the listener's
    /// per-client cap.
    public var isTrustedProxy: @Sendable (_ peer: String) -> Bool {
        let proxies = clientAddresses.trustedProxies
        return { peer in proxies.contains { $0.contains(peer) } }
    }

    /// The key the sign-in rate limit counts a client under (its address, an IPv6 one by its /64), from the
    /// connection's `peer` and the request's `X-Forwarded-For` fields: the listener's per-client cap on requests in
    /// flight counts under it too, so that rotating addresses inside one /64 gets past neither.
    public var clientLimitKey: @Sendable (_ peer: String, _ forwardedFor: [String]) -> String {
        let clientAddresses = clientAddresses
        return { peer, forwardedFor in
            ClientAddresses.limitKey(clientAddresses.clientAddress(peer: peer, forwardedFor: forwardedFor))
        }
    }

    /// The listener's own refusals (413, 400, 429, 503), answered by the group the path belongs to (JSON under
    /// `/api/` and `/apple/`, RFC 6749 JSON under `/oauth/`, plain text for the operational routes, else a page) and
    /// with the same security headers as every other answer. A page's words come from the catalogs in the default
    /// language: the listener answers before the request is handed on.
    public var refusalResponse: HTTPServer.Refusal {
        let (router, policy, isHTTPS) = (router, contentSecurityPolicy, configuration.isHTTPS)
        return { path, status, message in
            var response = router.group(owning: path).refusal(HTTPError(status, message), for: path)
            if response.isHTML { SecurityHeaders<Router>.addBrowserHeaders(to: &response.headers, contentSecurityPolicy: policy) }
            if isHTTPS { response.headers.set("Strict-Transport-Security", StrictTransportSecurity<Router>.headerValue) }
            return response
        }
    }

    /// One pass of the queue of Apple revocations that failed before; the background sweeper calls it, tests call
    /// it after moving the clock. Returns how many completed.
    @discardableResult
    public func processDueRevocations(limit: Int = 50) -> Int {
        endpoints.accountDeletion.processDueRevocations(limit: limit)
    }
}
