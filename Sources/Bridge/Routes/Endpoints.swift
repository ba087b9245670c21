import HTTPServer

/// The handlers behind the routes, built by `CompositionRoot.compose`.
struct Endpoints: Sendable {
    let login: LoginPage
    let appleRedirect: AppleRedirect
    let sessionPages: SessionPages
    let nativeAPI: NativeAPI
    let appleNotifications: AppleNotifications
    let androidRelay: AndroidRelay
    let staticFiles: StaticFiles
    let providerAuthorization: ProviderAuthorizationFlow
    let providerTokens: ProviderTokenEndpoint
    let providerUserinfo: ProviderUserinfo
    let providerLogout: ProviderLogout
    let forwardAuth: ForwardAuth
    let invitations: Invitations
}
