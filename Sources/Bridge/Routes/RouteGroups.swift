import HTTPServer

/// The route groups; a route takes its group's behaviour by being registered through it. Built by
/// `CompositionRoot.compose`.
struct RouteGroups: Sendable {
    let pageErrors: ErrorMapping<WebErrorPresenter>
    let jsonErrors: ErrorMapping<JSONErrorPresenter>
    let plainTextErrors: ErrorMapping<PlainTextErrorPresenter>
    let web: WebPageGroup
    let api: JSONAPIGroup
    let appleCallbacks: AppleCallbackGroup
    let operations: OperationsGroup
}
