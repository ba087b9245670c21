import AppleID
import BridgeMetrics
import BridgeSettings
import Foundation
import HTTPServer
import Mustache
import OpenIDProvider
import SignIn
import Storage
import WebPresentation

/// The login page: `GET /login`, and an OpenID client's `/oauth/authorize` without a session to use. It starts a
/// login attempt (`LoginAttemptStarter`) and shows the Sign in with Apple button that carries it, which the webview
/// bridge, Apple JS and popup mode take it from.
package struct LoginPage: Sendable {
    package static let attemptLifetime = LoginAttemptStarter.lifetime
    package static let scope = "name email"

    package let configuration: BridgeConfiguration
    package let pages: Pages
    package let metrics: Metrics
    package let returnDestination: ReturnDestination
    package let attempts: LoginAttemptStarter
    package let rateLimit: SignInRateLimit

    package init(configuration: BridgeConfiguration, pages: Pages, metrics: Metrics,
                 returnDestination: ReturnDestination, attempts: LoginAttemptStarter, rateLimit: SignInRateLimit) {
        self.configuration = configuration
        self.pages = pages
        self.metrics = metrics
        self.returnDestination = returnDestination
        self.attempts = attempts
        self.rateLimit = rateLimit
    }

    /// Without a Services ID there is no web flow, but an app's webview can still take state and nonce from the
    /// page and sign in natively with its bundle ID.
    package var isConfigured: Bool { configuration.servicesID != nil || !configuration.bundleIDs.isEmpty }

    /// `GET /login`.
    package func show(_ request: Request, _ visit: SignedInVisit?) throws -> Reply {
        guard isConfigured else { return Reply(notConfigured()) }
        return try attempts.start(request, admission: rateLimit.admission(of: request)) { [self] started in
            page(request, started, continueFrom: visit, returnTo: request.query["return_to"])
        }
    }

    package func notConfigured() -> Response {
        pages.render("login", status: 503, ["webConfigured": false, "showButton": false])
    }

    /// The login page for an OpenID client's authorization: its attempt carries the client's request, and the
    /// language links repeat that request (`languagePath`, `languageQuery`).
    package func show(_ request: Request, for authorization: @escaping LoginAttemptStarter.ClientAuthorization,
                      languageQuery: String, clientRedirectURI: String) throws -> Reply {
        guard isConfigured else { return Reply(notConfigured()) }
        return try attempts.start(request, admission: rateLimit.admission(of: request), for: authorization) { [self] started in
            page(request, started, continueFrom: nil, returnTo: nil, clientRedirectURI: clientRedirectURI,
                 languageLinks: ["languagePath": .string(ProviderEndpoints.authorization), "languageQuery": .string(languageQuery)])
        }
    }

    /// The login page of a stored attempt, with the cookies that bind it to this browser.
    package func page(_ request: Request, _ started: LoginAttemptStarter.Started, continueFrom visit: SignedInVisit?,
                      returnTo: String?, clientRedirectURI: String? = nil, languageLinks: [String: MustacheValue] = [:]) -> Response {
        let (state, nonce) = (started.state, started.nonce)
        var context: [String: MustacheValue] = [
            "webConfigured": .bool(configuration.servicesID != nil), "showButton": true,
            "authorizeURL": .string(configuration.servicesID.map { authorizeURL(state: state, nonce: nonce, clientID: $0) } ?? "#"),
            "state": .string(state), "nonce": .string(nonce),
            "redirectURI": .string(configuration.redirectURI), "clientID": .string(configuration.servicesID ?? ""),
            "scope": .string(Self.scope), "useJSSDK": .bool(configuration.useJSSDK),
            "useJSPopup": .bool(configuration.useJSPopup), "appleJSSDKBaseURL": .string(configuration.appleJSSDKBaseURL),
        ]
        context.merge(languageLinks) { _, given in given }
        context["signedOut"] = .bool(visit == nil && request.query["signed_out"] == "1")
        if let allowed = returnDestination.policy.allowed(returnTo) {
            context["languageQuery"] = .string(FormFields([("return_to", allowed)]).urlEncoded)
        }
        if let visit { context["continue"] = continueLink(visit, returnTo: returnTo) }
        var response = pages.render("login", context)
        response.headers.set("Content-Security-Policy", ContentSecurityPolicy.loginPage(configuration, clientRedirectURI: clientRedirectURI))
        if let cookie = returnDestination.cookie(for: returnTo, state: state, lifetime: Int(Self.attemptLifetime)) {
            response.setCookie(cookie)
        }
        response.setCookie(Self.bindingCookie(configuration.cookieNames, state: state, binding: started.binding))
        metrics.increment("bridge_login_attempts_total")
        return response
    }

    /// "Continue as …" for a person already signed in: to the allowed `return_to`, else the usual destination.
    package func continueLink(_ visit: SignedInVisit, returnTo: String?) -> MustacheValue {
        let who = visit.user.displayName.flatMap { $0.isEmpty ? nil : $0 } ?? visit.user.email
        let label = who.map { pages.text("login.continue_as", ["name": $0]) } ?? pages.text("login.continue")
        let href = returnDestination.policy.allowed(returnTo) ?? configuration.site.afterSignInURL
        return .object(["href": .string(href), "label": .string(label)])
    }

    package func authorizeURL(state: String, nonce: String, clientID: String) -> String {
        let query = FormFields([
            ("client_id", clientID), ("redirect_uri", configuration.redirectURI), ("response_type", "code id_token"),
            ("scope", Self.scope), ("response_mode", "form_post"), ("state", state), ("nonce", nonce),
        ])
        return configuration.appleIDURL + "/auth/authorize?" + query.urlEncoded
    }

    /// Binds a login attempt to this browser. SameSite=None: Apple's form_post is a cross-site POST, which a Lax
    /// cookie would not accompany.
    package static func bindingCookie(_ names: CookieNames, state: String, binding: String) -> Cookie {
        Cookie(name: names.binding(forState: state), value: binding, path: "/", maxAge: Int(attemptLifetime),
               secure: true, httpOnly: true, sameSite: .none)
    }
}
