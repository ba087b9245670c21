import ProviderRoutes
import WebRoutes


/// The route groups; a route takes its group's behaviour, and its path its group's error shape, by being
/// registered through it. Built by `CompositionRoot.compose`.
package struct RouteGroups: Sendable {
    package let web: WebPageGroup
    package let api: JSONAPIGroup
    package let appleCallbacks: AppleCallbackGroup
    package let operations: OperationsGroup
    package let openIDProvider: OpenIDProviderGroup
    package let forwardAuth: ForwardAuthGroup

    package init(web: WebPageGroup, api: JSONAPIGroup, appleCallbacks: AppleCallbackGroup, operations: OperationsGroup,
                 openIDProvider: OpenIDProviderGroup, forwardAuth: ForwardAuthGroup) {
        self.web = web
        self.api = api
        self.appleCallbacks = appleCallbacks
        self.operations = operations
        self.openIDProvider = openIDProvider
        self.forwardAuth = forwardAuth
    }
}
