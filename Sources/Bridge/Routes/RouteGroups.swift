import HTTPServer

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
            accessTokens: services.accessTokens, store: services.store, clock: services.clock),
            cors: CORSPolicy(origins: Set(services.configuration.corsOrigins)))
        appleCallbacks = AppleCallbackGroup(pageErrors: pageErrors, jsonErrors: jsonErrors, metrics: services.metrics,
                                            logger: logger)
        operations = OperationsGroup(errors: plainTextErrors)
    }
}
