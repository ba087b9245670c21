import AppleID
import BridgeMetrics
import BridgeSettings
import Foundation
import HTTPServer
import Logging
import OpenIDProvider
import ProviderRoutes
import SignIn
import Storage
import WebPresentation
import WebRoutes
import Webhooks

/// The one place the service is put together: configuration → store → keys → verifier → services → handlers →
/// route groups → route table, each built once and handed to what uses it. `serve` and `dev` take all of it
/// (through `BridgeServer`); `doctor`, `verify-token` and `provider-key` take the steps they need.
public enum CompositionRoot {
    /// The whole service, ready for a listener: the shared services, the sign-in, the handlers, the route groups,
    /// the route table.
    package static func compose(configuration: BridgeConfiguration, resourcesDirectory: String,
                                transport: any AppleHTTPTransport, clock: WallClock, logger: Logger,
                                signInRequestsPerMinute: Int) throws -> ComposedService {
        let shared = try sharedServices(configuration, resourcesDirectory: resourcesDirectory, transport: transport,
                                        clock: clock, logger: logger, signInRequestsPerMinute: signInRequestsPerMinute)
        let signIn = signInServices(shared)
        let attemptLookups = AttemptLookups()
        let endpoints = try endpoints(shared, signIn, attemptLookups: attemptLookups)
        let groups = routeGroups(shared)
        let (configuration, store, apple) = (shared.configuration, shared.store, shared.apple)
        let revocationBacklog = RevocationBacklog(store: StoreAccess(store) { $0 })
        let webhookDelivery = webhookDelivery(configuration, store: store, clock: clock, metrics: shared.metrics, logger: logger)
        var operational = OperationalMetrics(keys: apple.keys, callGuard: apple.callGuard, appleIDURL: configuration.appleIDURL,
                                             revocations: revocationBacklog, attemptLookups: attemptLookups, store: store,
                                             clock: clock)
        operational.webhooks = webhookDelivery
        let routes = BridgeApp(configuration: configuration, metrics: shared.metrics, operational: operational, groups: groups,
                               endpoints: endpoints, pages: shared.pages, logo: shared.logo)
        return ComposedService(configuration: configuration, store: store, apple: apple, metrics: shared.metrics, routes: routes,
                               clientAddresses: shared.clientAddresses, accountDeletion: signIn.accountDeletion,
                               revocationBacklog: revocationBacklog, webhookDelivery: webhookDelivery)
    }

    /// What most handlers share, each built once: the store, Apple's services, the secrets, the pages, the rate
    /// limit, browser sessions, the provider's keys and access tokens.
    package struct SharedServices {
        package let configuration: BridgeConfiguration
        package let store: any Store
        package let clock: WallClock
        package let metrics: Metrics
        package let logger: Logger
        package let apple: AppleServices
        package let secrets: ServerSecrets
        package let publicDirectory: String
        package let logo: SiteLogo?
        package let pages: Pages
        package let clientAddresses: ClientAddresses
        package let rateLimit: SignInRateLimit
        package let sessions: BrowserSessions
        package let providerKeys: ProviderKeyRing
        package let accessTokens: AccessTokens
        package let returnDestination: ReturnDestination
        package let vault: AppleTokenVault
        /// BRIDGE_WEBHOOK_*: what writes the events into the outbox; nil without webhooks.
        package let webhooks: WebhookEvents?
    }

    package static func sharedServices(_ configuration: BridgeConfiguration, resourcesDirectory: String,
                                       transport: any AppleHTTPTransport, clock: WallClock, logger: Logger,
                                       signInRequestsPerMinute: Int) throws -> SharedServices {
        var configuration = configuration
        if configuration.secretKey == nil {
            configuration.secretKey = try DevelopmentSecret.loadOrCreate(at: "data/dev-secret.key")
        }
        let store = try openStore(configuration, logger: logger)
        let metrics = Metrics()
        let apple = appleServices(configuration, clientKey: try clientKey(configuration), transport: transport,
                                  clock: clock, logger: logger, codeExchangeAttempts: 2, metrics: metrics)
        guard let secretKey = configuration.secretKey else { throw ConfigurationError("BRIDGE_SECRET_KEY", "is missing") }
        let secrets = try ServerSecrets(secretKey: secretKey)
        let publicDirectory = resourcesDirectory + "/Public"
        let logo = try SiteLogo.load(configuration.site.logoPath, publicDirectory: publicDirectory)
        let pages = try Pages(directory: resourcesDirectory + "/Templates", devMode: configuration.mode == .development,
                              branding: Branding(siteName: configuration.site.siteName, logoURL: logo?.url))
        let clientAddresses = ClientAddresses(trustedProxies: configuration.trustedProxies)
        let providerKeys = try ProviderKeyRing(store: StoreAccess(store) { $0 }, sealingKey: secrets.providerKeySealingKey, clock: clock)
        return SharedServices(
            configuration: configuration, store: store, clock: clock, metrics: metrics, logger: logger, apple: apple,
            secrets: secrets, publicDirectory: publicDirectory, logo: logo, pages: pages, clientAddresses: clientAddresses,
            rateLimit: SignInRateLimit(perMinute: signInRequestsPerMinute, store: StoreAccess(store) { $0 }, clock: clock,
                                       clientAddresses: clientAddresses),
            sessions: BrowserSessions(store: StoreAccess(store) { $0 }, clock: clock, csrfKey: secrets.csrfKey,
                                      cookieNames: configuration.cookieNames),
            providerKeys: providerKeys,
            accessTokens: AccessTokens(keys: providerKeys, issuer: configuration.publicURL, lifetime: NativeAPI.accessTokenLifetime),
            returnDestination: ReturnDestination(key: secrets.returnDestinationKey, policy: configuration.site.returnURLs),
            vault: AppleTokenVault(key: secrets.appleTokenKey), webhooks: webhookEvents(configuration))
    }

    /// Signing in: one exchanger (it holds the queue of exchanges to retry), one sign-in transaction, one rule for
    /// sessions and their refresh tokens, one account deletion.
    package struct SignInServices {
        package let relayedCodes: RelayedCodes
        package let sessionIssuer: SessionIssuer
        package let signIn: IdentityTokenSignIn
        package let accountDeletion: AccountDeletion
    }

    package static func signInServices(_ shared: SharedServices) -> SignInServices {
        let (configuration, store, clock, apple) = (shared.configuration, shared.store, shared.clock, shared.apple)
        let (metrics, logger, vault) = (shared.metrics, shared.logger, shared.vault)
        let retrier = configuration.requireCodeExchange ? nil : apple.tokenClient.map {
            CodeExchangeRetrier(client: $0, store: StoreAccess(store) { $0 }, vault: vault, metrics: metrics, logger: logger)
        }
        let relayedCodes = RelayedCodes(store: StoreAccess(store) { $0 }, clock: clock)
        let exchanger = CodeExchanger(client: apple.tokenClient, servicesID: configuration.servicesID,
                                      redirectURI: configuration.redirectURI, isRequired: configuration.requireCodeExchange,
                                      metrics: metrics, logger: logger, retrier: retrier,
                                      relayedCodes: configuration.androidPackages.isEmpty ? nil : relayedCodes)
        let sessionIssuer = SessionIssuer(metrics: metrics, logger: logger)
        let signIn = IdentityTokenSignIn(
            verifier: apple.verifier, exchanger: exchanger,
            service: SignInService(signIns: store, clock: clock, vault: vault, exchanger: exchanger, sessionIssuer: sessionIssuer,
                                   servicesID: configuration.servicesID, replayLeeway: apple.verifier.policy.leeway,
                                   metrics: metrics, logger: logger, transferTeam: configuration.teamID,
                                   webhooks: shared.webhooks),
            requireNonce: configuration.requireNonce)
        let accountDeletion = AccountDeletion(store: StoreAccess(store) { $0 }, clock: clock, vault: vault, appleTokens: apple.tokenClient,
                                              metrics: metrics, logger: logger, webhooks: shared.webhooks)
        return SignInServices(relayedCodes: relayedCodes, sessionIssuer: sessionIssuer, signIn: signIn,
                              accountDeletion: accountDeletion)
    }

    /// The handlers: the web's, the JSON API's, Apple's callbacks', the OpenID provider's.
    package static func endpoints(_ shared: SharedServices, _ signIn: SignInServices, attemptLookups: AttemptLookups) throws -> Endpoints {
        let (configuration, store, clock, pages) = (shared.configuration, shared.store, shared.clock, shared.pages)
        let (metrics, logger, sessions) = (shared.metrics, shared.logger, shared.sessions)
        let recentAttempts = RecentLoginAttempts()
        let sealedStates = SealedLoginState(key: shared.secrets.loginStateKey)
        let login = LoginPage(configuration: configuration, pages: pages, metrics: metrics, returnDestination: shared.returnDestination,
                              attempts: LoginAttemptStarter(store: StoreAccess(store) { $0 }, recentAttempts: recentAttempts,
                                                            sealedStates: sealedStates),
                              rateLimit: shared.rateLimit)
        let idTokens = ProviderTokens(issuer: configuration.publicURL)
        let providerAuthorization = ProviderAuthorizationFlow(configuration: configuration, store: StoreAccess(store) { $0 }, clock: clock,
                                                              login: login, rateLimit: shared.rateLimit, pages: pages,
                                                              idTokens: idTokens, keys: shared.providerKeys,
                                                              metrics: metrics, logger: logger)
        let invitations = Invitations(store: StoreAccess(store) { $0 }, clock: clock, logger: logger)
        let landing = SignedInLanding(sessions: sessions, returnDestination: shared.returnDestination, invitations: invitations,
                                      afterSignInURL: configuration.site.afterSignInURL)
        let clients = ProviderClientAuthentication(clients: configuration.clients)
        return Endpoints(
            login: login,
            appleRedirect: AppleRedirect(
                store: StoreAccess(store) { $0 }, recentAttempts: recentAttempts, sealedStates: sealedStates, lookups: attemptLookups,
                clock: clock, signIn: signIn.signIn, landing: landing, pages: pages, metrics: metrics, logger: logger,
                provider: providerAuthorization, again: RepeatedCallback(sessions: sessions, landing: landing)),
            sessionPages: SessionPages(store: StoreAccess(store) { $0 }, cookieNames: configuration.cookieNames, pages: pages,
                                       accountDeletion: signIn.accountDeletion, logger: logger),
            nativeAPI: NativeAPI(store: StoreAccess(store) { $0 }, clock: clock, signIn: signIn.signIn,
                                 acceptUnsentNonce: configuration.acceptUnsentNonce,
                                 sessionIssuer: signIn.sessionIssuer, accessTokens: shared.accessTokens,
                                 accountDeletion: signIn.accountDeletion, metrics: metrics, logger: logger),
            appleNotifications: AppleNotifications(verifier: shared.apple.notifications, store: StoreAccess(store) { $0 }, clock: clock,
                                                   metrics: metrics, logger: logger, webhooks: shared.webhooks),
            androidRelay: AndroidRelay(packages: configuration.androidPackages, servicesID: configuration.servicesID,
                                       verifier: shared.apple.verifier, relayedCodes: signIn.relayedCodes,
                                       relayURL: { [configuration] in configuration.androidRelayURL(package: $0) },
                                       pages: pages, logger: logger),
            staticFiles: try StaticFiles(directory: shared.publicDirectory),
            providerAuthorization: providerAuthorization,
            providerTokens: ProviderTokenEndpoint(store: StoreAccess(store) { $0 }, clock: clock, clientAuthentication: clients,
                                                  accessTokens: shared.accessTokens, idTokens: idTokens,
                                                  keys: shared.providerKeys, sessionIssuer: signIn.sessionIssuer,
                                                  metrics: metrics, logger: logger),
            providerUserinfo: ProviderUserinfo(store: StoreAccess(store) { $0 }, clock: clock, accessTokens: shared.accessTokens,
                                               clientAuthentication: clients, logger: logger),
            providerLogout: ProviderLogout(configuration: configuration, store: StoreAccess(store) { $0 }, sessions: sessions, idTokens: idTokens,
                                           keys: shared.providerKeys, pages: pages, logger: logger),
            forwardAuth: ForwardAuth(store: StoreAccess(store) { $0 }, clock: clock, cookieNames: configuration.cookieNames),
            invitations: invitations)
    }

    /// The route groups: the paths each owns, its error shape, session and CSRF, rate limit, Bearer authentication,
    /// CORS.
    package static func routeGroups(_ shared: SharedServices) -> RouteGroups {
        let (configuration, pages, metrics, logger) = (shared.configuration, shared.pages, shared.metrics, shared.logger)
        let pageAnswers = PageAnswers(errors: ErrorMapping(presenter: WebErrorPresenter(pages: pages), logger: logger, metrics: metrics),
                                      languages: pages.catalogs.negotiation)
        let jsonErrors = ErrorMapping(presenter: JSONErrorPresenter(), logger: logger, metrics: metrics)
        let plainTextErrors = ErrorMapping(presenter: PlainTextErrorPresenter(), logger: logger, metrics: metrics)
        let web = WebPageGroup(answers: pageAnswers, sessions: shared.sessions)
        return RouteGroups(
            web: web,
            api: JSONAPIGroup(errors: jsonErrors, rateLimit: shared.rateLimit,
                              bearer: BearerAuthentication(accessTokens: shared.accessTokens, store: StoreAccess(shared.store) { $0 },
                                                           clock: shared.clock, clients: configuration.clients),
                              cors: CORSPolicy(origins: Set(configuration.corsOrigins))),
            appleCallbacks: AppleCallbackGroup(pages: pageAnswers, jsonErrors: jsonErrors, metrics: metrics, logger: logger),
            operations: OperationsGroup(errors: plainTextErrors, pages: pageAnswers),
            openIDProvider: OpenIDProviderGroup(errors: ErrorMapping(presenter: OAuthErrorPresenter(), logger: logger, metrics: metrics),
                                                pages: web, rateLimit: shared.rateLimit),
            forwardAuth: ForwardAuthGroup(errors: plainTextErrors))
    }

    /// The configured store, with every migration applied.
    package static func openStore(_ configuration: BridgeConfiguration, logger: Logger) throws(ConfigurationError) -> any Store {
        do {
            let store = try StoreFactory.open(configuration.database, poolSize: configuration.databasePoolSize)
            let applied = try store.migrate()
            if !applied.isEmpty {
                logger.info("migrations_applied", ["versions": applied.map(String.init).joined(separator: ",")])
            }
            if let postgres = store as? PostgresStore, postgres.encryptsLoopback {
                logger.log(.warning, "database_tls_on_loopback", [
                    "advice": "PostgreSQL is on this machine: name its Unix socket in BRIDGE_DATABASE "
                        + "(postgres://USER@%2Frun%2Fpostgresql/DATABASE) to spare TLS on every round trip; see docs/deployment.md",
                ])
            }
            return store
        } catch {
            throw ConfigurationError("BRIDGE_DATABASE", "cannot be opened: \(error)")
        }
    }

    /// The configured store for a command that works on what the server stored (`members`, `invite`): it must exist
    /// already, since a mistyped SQLite path would otherwise be a new, empty database.
    package static func existingStore(_ configuration: BridgeConfiguration, logger: Logger) throws(ConfigurationError) -> any Store {
        if case let .sqlite(path) = configuration.database, !FileManager.default.fileExists(atPath: path) {
            throw ConfigurationError("BRIDGE_DATABASE", "names no database: \(path) does not exist")
        }
        return try openStore(configuration, logger: logger)
    }

    /// The key that signs client secrets, or nil when APPLE_TEAM_ID, APPLE_KEY_ID and APPLE_PRIVATE_KEY_PATH are unset.
    public static func clientKey(_ configuration: BridgeConfiguration) throws(ConfigurationError) -> AppleClientKey? {
        guard let teamID = configuration.teamID, let keyID = configuration.keyID, let path = configuration.privateKeyPath else {
            return nil
        }
        do {
            return try AppleClientKey.load(teamID: teamID, keyID: keyID, path: path)
        } catch {
            throw ConfigurationError("APPLE_PRIVATE_KEY_PATH", error.description)
        }
    }

    /// Apple's keys, the verifiers and (with a client key) the token client. `codeExchangeAttempts` is low for the
    /// server, where a person waits on a sign-in: a down Apple should cost seconds, not most of a minute.
    public static func appleServices(_ configuration: BridgeConfiguration, clientKey: AppleClientKey?,
                                     transport: any AppleHTTPTransport, clock: WallClock = .system, logger: Logger? = nil,
                                     codeExchangeAttempts: Int = 3, metrics: Metrics? = nil) -> AppleServices {
        var limits = AppleCallGuard.Settings()
        limits.maxInFlight = configuration.maxAppleCallsInFlight
        let callGuard = AppleCallGuard(settings: limits)
        let transport = GuardedTransport(transport, guard: callGuard, callTimeout: AppleServices.callTimeout,
                                         observer: metrics.map(AppleServices.recordCall(into:)))
        let keys = JWKSCache(url: configuration.appleIDURL + "/auth/keys", transport: transport, clock: clock) { event, detail in
            logger?.info(event, ["detail": detail])
        }
        let verifier = IdentityTokenVerifier(
            policy: VerificationPolicy(issuers: configuration.issuers, servicesID: configuration.servicesID,
                                       bundleIDs: configuration.bundleIDs),
            keys: keys, clock: clock)
        let notifications = NotificationVerifier(keys: keys, issuers: configuration.issuers,
                                                 clientIDs: configuration.clientIDs, clock: clock)
        let secrets = clientKey.map { ClientSecretProvider(key: $0, clock: clock) }
        let tokenClient = secrets.map {
            AppleTokenClient(baseURL: configuration.appleIDURL, transport: transport, secrets: $0, verifier: verifier,
                             attempts: codeExchangeAttempts, callGuard: callGuard)
        }
        return AppleServices(keys: keys, verifier: verifier, notifications: notifications, clientSecrets: secrets,
                             tokenClient: tokenClient, callGuard: callGuard)
    }
}
