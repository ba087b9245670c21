import AppleID
import Foundation
import HTTPServer
import Mustache
import Storage

/// `GET /login`: starts a login attempt (state, nonce, and a cookie binding it to this browser) and shows the
/// Sign in with Apple button that carries it.
struct LoginPage: Sendable {
    static let attemptLifetime: TimeInterval = 600
    static let scope = "name email"

    let configuration: BridgeConfiguration
    let store: any Store
    let clock: WallClock
    let pages: Pages
    let rateLimit: SignInRateLimit
    let metrics: Metrics
    let returnDestination: ReturnDestination
    let recentAttempts: RecentLoginAttempts
    let sealedStates: SealedLoginState

    func show(_ request: Request, _ visit: SignedInVisit?) throws -> Response {
        // Without a Services ID there is no web flow, but an app's webview can still take state and nonce
        // from the page and sign in natively with its bundle ID.
        guard configuration.servicesID != nil || !configuration.bundleIDs.isEmpty else {
            return pages.render("login", status: 503, ["webConfigured": false, "showButton": false])
        }
        let admission = rateLimit.admission(of: request)
        let now = admission.now
        let nonce = SecretTokens.random()
        let binding = SecretTokens.random()
        let bindingHash = SecretTokens.digest(binding)
        let expiresAt = now.addingTimeInterval(Self.attemptLifetime)
        // The state carries the attempt sealed, so that any instance checks the callback without a read.
        let state = try sealedStates.seal(nonce: nonce, bindingHash: bindingHash, createdAt: now, expiresAt: expiresAt)
        // Only digests are stored: a copy of the database holds no live state, and lookups never touch the value.
        let attempt = LoginAttempt(state: SecretTokens.digest(state), nonce: nonce, bindingHash: bindingHash,
                                   createdAt: now, expiresAt: expiresAt, consumedAt: nil)
        // The rate limit and the attempt share one transaction (an upsert and an insert, so READ COMMITTED); the
        // listener thread serves other connections while it waits for its group commit.
        return try request.answer(afterWriting: { transaction in
            try admission.admit(in: transaction)
            try transaction.insertLoginAttempt(attempt)
        }, to: store, isolation: SignInRateLimit.Admission.isolation) { [self] in
            recentAttempts.remember(attempt)
            return page(request, visit, state: state, nonce: nonce, binding: binding)
        }
    }

    /// The login page of a stored attempt, with the cookies that bind it to this browser.
    func page(_ request: Request, _ visit: SignedInVisit?, state: String, nonce: String, binding: String) -> Response {
        var context: [String: MustacheValue] = [
            "webConfigured": .bool(configuration.servicesID != nil), "showButton": true,
            "authorizeURL": .string(configuration.servicesID.map { authorizeURL(state: state, nonce: nonce, clientID: $0) } ?? "#"),
            "state": .string(state), "nonce": .string(nonce),
            "redirectURI": .string(configuration.redirectURI), "clientID": .string(configuration.servicesID ?? ""),
            "scope": .string(Self.scope), "useJSSDK": .bool(configuration.useJSSDK),
            "useJSPopup": .bool(configuration.useJSPopup), "appleJSSDKBaseURL": .string(configuration.appleJSSDKBaseURL),
        ]
        context["signedOut"] = .bool(visit == nil && request.query["signed_out"] == "1")
        if let returnTo = returnDestination.policy.allowed(request.query["return_to"]) {
            context["languageQuery"] = .string(FormFields([("return_to", returnTo)]).urlEncoded)
        }
        if let visit { context["continue"] = continueLink(visit, returnTo: request.query["return_to"]) }
        var response = pages.render("login", context)
        response.headers.set("Content-Security-Policy", ContentSecurityPolicy.loginPage(configuration))
        if let cookie = returnDestination.cookie(for: request.query["return_to"], state: state, lifetime: Int(Self.attemptLifetime)) {
            response.setCookie(cookie)
        }
        response.setCookie(Self.bindingCookie(configuration.cookieNames, state: state, binding: binding))
        metrics.increment("bridge_login_attempts_total")
        return response
    }

    /// "Continue as …" for a person already signed in: to the allowed `return_to`, else the usual destination.
    func continueLink(_ visit: SignedInVisit, returnTo: String?) -> MustacheValue {
        let who = visit.user.displayName.flatMap { $0.isEmpty ? nil : $0 } ?? visit.user.email
        let label = who.map { pages.text("login.continue_as", ["name": $0]) } ?? pages.text("login.continue")
        let href = returnDestination.policy.allowed(returnTo) ?? configuration.site.afterSignInURL
        return .object(["href": .string(href), "label": .string(label)])
    }

    func authorizeURL(state: String, nonce: String, clientID: String) -> String {
        let query = FormFields([
            ("client_id", clientID), ("redirect_uri", configuration.redirectURI), ("response_type", "code id_token"),
            ("scope", Self.scope), ("response_mode", "form_post"), ("state", state), ("nonce", nonce),
        ])
        return configuration.appleIDURL + "/auth/authorize?" + query.urlEncoded
    }

    /// Binds a login attempt to this browser. SameSite=None: Apple's form_post is a cross-site POST, which a Lax
    /// cookie would not accompany.
    static func bindingCookie(_ names: CookieNames, state: String, binding: String) -> Cookie {
        Cookie(name: names.binding(forState: state), value: binding, path: "/", maxAge: Int(attemptLifetime),
               secure: true, httpOnly: true, sameSite: .none)
    }
}
