import AppleID
import HTTPServer
import Storage

/// What the route groups and endpoints are built from, gathered once while the application is put together.
struct SharedServices {
    let configuration: BridgeConfiguration
    let store: any Store
    let apple: AppleServices
    let secrets: ServerSecrets
    let clock: Clock
    let logger: Logger
    let metrics: Metrics
    let pages: Pages
    let rateLimit: SignInRateLimit

    var sessions: BrowserSessions { BrowserSessions(store: store, clock: clock, csrfKey: secrets.csrfKey) }

    var accessTokens: AccessTokens {
        AccessTokens(secretKey: secrets.secretKey, issuer: configuration.publicURL, lifetime: NativeAPI.accessTokenLifetime)
    }

    var vault: AppleTokenVault { AppleTokenVault(key: secrets.appleTokenKey) }

    var exchanger: CodeExchanger {
        CodeExchanger(client: apple.tokenClient, servicesID: configuration.servicesID, redirectURI: configuration.redirectURI,
                      isRequired: configuration.requireCodeExchange, metrics: metrics, logger: logger)
    }

    var signIn: SignInService {
        SignInService(store: store, clock: clock, vault: vault, exchanger: exchanger, servicesID: configuration.servicesID,
                      replayLeeway: apple.verifier.policy.leeway, metrics: metrics, logger: logger)
    }

    var accountDeletion: AccountDeletion {
        AccountDeletion(store: store, clock: clock, vault: vault, appleTokens: apple.tokenClient, metrics: metrics, logger: logger)
    }
}

/// The route groups; a route takes its group's behaviour by being registered through it.
struct RouteGroups: Sendable {
    let pageErrors: ErrorMapping<WebErrorPresenter>
    let jsonErrors: ErrorMapping<JSONErrorPresenter>
    let plainTextErrors: ErrorMapping<PlainTextErrorPresenter>
    let web: WebPageGroup
    let api: JSONAPIGroup
    let appleCallbacks: AppleCallbackGroup
    let operations: OperationsGroup

    init(_ services: SharedServices) {
        let logger = services.logger
        pageErrors = ErrorMapping(presenter: WebErrorPresenter(pages: services.pages), logger: logger)
        jsonErrors = ErrorMapping(presenter: JSONErrorPresenter(), logger: logger)
        plainTextErrors = ErrorMapping(presenter: PlainTextErrorPresenter(), logger: logger)
        web = WebPageGroup(errors: pageErrors, sessions: services.sessions)
        api = JSONAPIGroup(errors: jsonErrors, rateLimit: services.rateLimit, bearer: BearerAuthentication(
            accessTokens: services.accessTokens, store: services.store, clock: services.clock))
        appleCallbacks = AppleCallbackGroup(pageErrors: pageErrors, jsonErrors: jsonErrors, metrics: services.metrics,
                                            logger: logger)
        operations = OperationsGroup(errors: plainTextErrors)
    }
}

/// The handlers behind the routes.
struct Endpoints: Sendable {
    let login: LoginPage
    let appleRedirect: AppleRedirect
    let sessionPages: SessionPages
    let nativeAPI: NativeAPI
    let appleNotifications: AppleNotifications
    let accountDeletion: AccountDeletion
    let staticFiles: StaticFiles

    init(_ services: SharedServices, publicDirectory: String) throws {
        let (configuration, store, clock, metrics, logger) = (services.configuration, services.store, services.clock,
                                                              services.metrics, services.logger)
        let (signIn, exchanger, verifier) = (services.signIn, services.exchanger, services.apple.verifier)
        accountDeletion = services.accountDeletion
        login = LoginPage(configuration: configuration, store: store, clock: clock, pages: services.pages,
                          rateLimit: services.rateLimit, metrics: metrics)
        appleRedirect = AppleRedirect(servicesID: configuration.servicesID, store: store, clock: clock, verifier: verifier,
                                      exchanger: exchanger, signIn: signIn, pages: services.pages,
                                      webErrors: WebErrorPresenter(pages: services.pages), metrics: metrics, logger: logger)
        sessionPages = SessionPages(store: store, pages: services.pages, accountDeletion: accountDeletion, logger: logger)
        nativeAPI = NativeAPI(store: store, clock: clock, verifier: verifier, exchanger: exchanger, signIn: signIn,
                              accessTokens: services.accessTokens, accountDeletion: accountDeletion, metrics: metrics,
                              logger: logger)
        appleNotifications = AppleNotifications(verifier: services.apple.notifications, store: store, clock: clock,
                                                metrics: metrics, logger: logger)
        staticFiles = try StaticFiles(directory: publicDirectory)
    }
}
