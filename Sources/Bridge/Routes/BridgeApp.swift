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
    let groups: RouteGroups
    let endpoints: Endpoints
    let pages: Pages
    let contentSecurityPolicy: String

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
        let pages = try Pages(directory: resourcesDirectory + "/Templates", devMode: configuration.mode == .development)
        let services = SharedServices(configuration: configuration, store: store, apple: apple, secrets: secrets,
                                      clock: clock, logger: logger, metrics: metrics, pages: pages,
                                      rateLimit: SignInRateLimit(perMinute: signInRequestsPerMinute, clock: clock),
                                      exchangeRetrier: Self.exchangeRetrier(configuration, store, apple, secrets, metrics, logger))
        self.configuration = configuration
        self.store = store
        self.apple = apple
        self.metrics = metrics
        groups = RouteGroups(services)
        endpoints = try Endpoints(services, publicDirectory: resourcesDirectory + "/Public")
        self.pages = pages
        contentSecurityPolicy = ContentSecurityPolicy.header(allowingAppleJSSDK: configuration.useJSSDK)
    }

    /// Retries exchanges a sign-in went on without; none when the exchange is required (or impossible).
    static func exchangeRetrier(_ configuration: BridgeConfiguration, _ store: any Store, _ apple: AppleServices,
                                _ secrets: ServerSecrets, _ metrics: Metrics, _ logger: Logger) -> CodeExchangeRetrier? {
        guard !configuration.requireCodeExchange, let client = apple.tokenClient else { return nil }
        return CodeExchangeRetrier(client: client, store: store, vault: AppleTokenVault(key: secrets.appleTokenKey),
                                   metrics: metrics, logger: logger)
    }

    /// The route table: each route is registered in its group and takes that group's behaviour.
    public func makeResponder() -> some HTTPResponder {
        let (web, api, apple, operations) = (groups.web, groups.api, groups.appleCallbacks, groups.operations)
        let (login, redirect, session, native) = (endpoints.login, endpoints.appleRedirect, endpoints.sessionPages, endpoints.nativeAPI)
        var router = Router()
        router.add("GET", "/", web.page { _ in .redirect(to: "/login") })
        router.add("GET", "/login", web.page(login.show))
        router.add("GET", "/session", web.signedIn(session.show))
        router.add("POST", "/logout", web.signedIn(csrfRefusal: .signOutNotFromThisSite, signedOut: session.logoutWithoutSession,
                                                   session.logout))
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
        router.add("GET", "/metrics", operations.endpoint { [metrics, keys] _ in
            var response = Response.text(metrics.prometheusText(extra: [("bridge_jwks_fetches_total", keys.fetches)]))
            response.headers.set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            return response
        })
        router.addPrefix("GET", "/public/", operations.endpoint { [staticFiles = endpoints.staticFiles] in try staticFiles.respond(to: $0) })
        let unrouted = UnroutedRequests(router: router, pageErrors: groups.pageErrors, jsonErrors: groups.jsonErrors,
                                        plainTextErrors: groups.plainTextErrors)
        return SecurityHeaders(unrouted, contentSecurityPolicy: contentSecurityPolicy, sessionCookieNames: [CookieNames.session])
    }

    /// The listener's own refusals (413), shaped like every other error and with the same security headers.
    public var refusalResponse: HTTPServer.Refusal {
        let (pages, policy) = (pages, contentSecurityPolicy)
        return { path, status, message in
            if UnroutedRequests.isJSONPath(path) {
                return JSONErrorPresenter.Body(status: status, code: HTTPErrorCode.code(for: status), message: message).response
            }
            var response = pages.error(status: status, heading: HTTPError.reasonPhrase(status), message: message, retryURL: nil)
            if response.isHTML {
                SecurityHeaders<Router>.addBrowserHeaders(to: &response.headers, contentSecurityPolicy: policy)
            }
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
