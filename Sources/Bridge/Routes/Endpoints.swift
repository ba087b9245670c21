import HTTPServer
import OpenIDProvider

/// The handlers behind the routes.
struct Endpoints: Sendable {
    let login: LoginPage
    let appleRedirect: AppleRedirect
    let sessionPages: SessionPages
    let nativeAPI: NativeAPI
    let appleNotifications: AppleNotifications
    let accountDeletion: AccountDeletion
    let staticFiles: StaticFiles
    let providerAuthorization: ProviderAuthorizationFlow
    let providerTokens: ProviderTokenEndpoint
    let providerUserinfo: ProviderUserinfo

    init(_ services: SharedServices, publicDirectory: String) throws {
        let (configuration, store, clock, metrics, logger) = (services.configuration, services.store, services.clock,
                                                              services.metrics, services.logger)
        let (signIn, exchanger, verifier) = (services.signInService, services.exchanger, services.apple.verifier)
        accountDeletion = services.accountDeletion
        login = LoginPage(configuration: configuration, store: store, clock: clock, pages: services.pages,
                          rateLimit: services.rateLimit, metrics: metrics, returnDestination: services.returnDestination)
        providerAuthorization = ProviderAuthorizationFlow(configuration: configuration, store: store, clock: clock, login: login,
                                                          rateLimit: services.rateLimit, pages: services.pages,
                                                          metrics: metrics, logger: logger)
        (providerTokens, providerUserinfo) = Self.provider(services)
        appleRedirect = AppleRedirect(servicesID: configuration.servicesID, store: store, clock: clock, verifier: verifier,
                                      exchanger: exchanger, signInService: signIn, requireNonce: configuration.requireNonce,
                                      sessions: services.sessions, pages: services.pages,
                                      webErrors: WebErrorPresenter(pages: services.pages), metrics: metrics, logger: logger,
                                      returnDestination: services.returnDestination,
                                      afterSignInURL: configuration.site.afterSignInURL, provider: providerAuthorization)
        sessionPages = SessionPages(store: store, cookieNames: configuration.cookieNames, pages: services.pages,
                                    accountDeletion: accountDeletion, logger: logger)
        nativeAPI = NativeAPI(store: store, clock: clock, verifier: verifier, exchanger: exchanger, signInService: signIn,
                              sessionIssuer: services.sessionIssuer, requireNonce: configuration.requireNonce, accessTokens: services.accessTokens, accountDeletion: accountDeletion, metrics: metrics,
                              logger: logger)
        appleNotifications = AppleNotifications(verifier: services.apple.notifications, store: store, clock: clock,
                                                metrics: metrics, logger: logger)
        staticFiles = try StaticFiles(directory: publicDirectory)
    }

    static func provider(_ services: SharedServices) -> (ProviderTokenEndpoint, ProviderUserinfo) {
        let clients = ProviderClientAuthentication(clients: services.configuration.clients)
        let tokens = ProviderTokenEndpoint(store: services.store, clock: services.clock, clientAuthentication: clients,
                                           accessTokens: services.accessTokens,
                                           idTokens: ProviderTokens(issuer: services.configuration.publicURL),
                                           keys: services.providerKeys, sessionIssuer: services.sessionIssuer,
                                           rateLimit: services.rateLimit,
                                           metrics: services.metrics, logger: services.logger)
        let userinfo = ProviderUserinfo(store: services.store, clock: services.clock, accessTokens: services.accessTokens,
                                        clientAuthentication: clients, logger: services.logger)
        return (tokens, userinfo)
    }
}
