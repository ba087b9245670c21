import HTTPServer

/// The route groups; a route takes its group's behaviour, and its path its group's error shape, by being
/// registered through it.
struct RouteGroups: Sendable {
    let web: WebPageGroup
    let api: JSONAPIGroup
    let appleCallbacks: AppleCallbackGroup
    let operations: OperationsGroup
    let openIDProvider: OpenIDProviderGroup

    init(_ services: SharedServices) {
        let logger = services.logger
        let pages = PageAnswers(errors: ErrorMapping(presenter: WebErrorPresenter(pages: services.pages), logger: logger),
                                languages: services.pages.catalogs.negotiation)
        let jsonErrors = ErrorMapping(presenter: JSONErrorPresenter(), logger: logger)
        web = WebPageGroup(answers: pages, sessions: services.sessions)
        api = JSONAPIGroup(errors: jsonErrors, rateLimit: services.rateLimit, bearer: BearerAuthentication(
            accessTokens: services.accessTokens, store: services.store, clock: services.clock),
            cors: CORSPolicy(origins: Set(services.configuration.corsOrigins)))
        appleCallbacks = AppleCallbackGroup(pages: pages, jsonErrors: jsonErrors, metrics: services.metrics, logger: logger)
        operations = OperationsGroup(errors: ErrorMapping(presenter: PlainTextErrorPresenter(), logger: logger), pages: pages)
        openIDProvider = OpenIDProviderGroup(errors: ErrorMapping(presenter: OAuthErrorPresenter(), logger: logger), pages: web)
    }
}
