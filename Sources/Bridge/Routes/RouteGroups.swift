import HTTPServer

/// The route groups; a route takes its group's behaviour, and its path its group's error shape, by being
/// registered through it. Built by `CompositionRoot.compose`.
struct RouteGroups: Sendable {
    let web: WebPageGroup
    let api: JSONAPIGroup
    let appleCallbacks: AppleCallbackGroup
    let operations: OperationsGroup
    let openIDProvider: OpenIDProviderGroup
    let forwardAuth: ForwardAuthGroup
}
