import HTTPServer
import ProviderRoutes
import WebRoutes

/// The handlers behind the routes, built by `CompositionRoot.compose`.
package struct Endpoints: Sendable {
    package let login: LoginPage
    package let appleRedirect: AppleRedirect
    package let sessionPages: SessionPages
    package let nativeAPI: NativeAPI
    package let appleNotifications: AppleNotifications
    package let androidRelay: AndroidRelay
    package let staticFiles: StaticFiles
    package let providerAuthorization: ProviderAuthorizationFlow
    package let providerTokens: ProviderTokenEndpoint
    package let providerUserinfo: ProviderUserinfo
    package let providerLogout: ProviderLogout
    package let forwardAuth: ForwardAuth
    package let invitations: Invitations

    package init(login: LoginPage, appleRedirect: AppleRedirect, sessionPages: SessionPages, nativeAPI: NativeAPI,
                 appleNotifications: AppleNotifications, androidRelay: AndroidRelay, staticFiles: StaticFiles,
                 providerAuthorization: ProviderAuthorizationFlow, providerTokens: ProviderTokenEndpoint,
                 providerUserinfo: ProviderUserinfo, providerLogout: ProviderLogout, forwardAuth: ForwardAuth,
                 invitations: Invitations) {
        self.login = login
        self.appleRedirect = appleRedirect
        self.sessionPages = sessionPages
        self.nativeAPI = nativeAPI
        self.appleNotifications = appleNotifications
        self.androidRelay = androidRelay
        self.staticFiles = staticFiles
        self.providerAuthorization = providerAuthorization
        self.providerTokens = providerTokens
        self.providerUserinfo = providerUserinfo
        self.providerLogout = providerLogout
        self.forwardAuth = forwardAuth
        self.invitations = invitations
    }
}
