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

    func show(_ request: Request) throws -> Response {
        // Without a Services ID there is no web flow, but an app's webview can still take state and nonce
        // from the page and sign in natively with its bundle ID.
        guard configuration.servicesID != nil || !configuration.bundleIDs.isEmpty else {
            return pages.render("login", status: 503, ["title": "Sign in", "webConfigured": false, "showButton": false])
        }
        try rateLimit.admit(request)
        let now = clock.now
        let state = SecretTokens.random()
        let nonce = SecretTokens.random()
        let binding = SecretTokens.random()
        // Only digests are stored: a copy of the database holds no live state, and lookups never touch the value.
        try store.write {
            try $0.insertLoginAttempt(LoginAttempt(
                state: SecretTokens.digest(state), nonce: nonce, bindingHash: SecretTokens.digest(binding),
                createdAt: now, expiresAt: now.addingTimeInterval(Self.attemptLifetime), consumedAt: nil))
        }
        var response = pages.render("login", [
            "title": "Sign in", "webConfigured": .bool(configuration.servicesID != nil), "showButton": true,
            "authorizeURL": .string(configuration.servicesID.map { authorizeURL(state: state, nonce: nonce, clientID: $0) } ?? "#"),
            "state": .string(state), "nonce": .string(nonce),
            "redirectURI": .string(configuration.redirectURI), "clientID": .string(configuration.servicesID ?? ""),
            "scope": .string(Self.scope), "useJSSDK": .bool(configuration.useJSSDK),
        ])
        // SameSite=None: Apple's form_post is a cross-site POST, which a Lax cookie would not accompany.
        response.setCookie(Cookie(name: configuration.cookieNames.binding(forState: state), value: binding,
                                  path: "/", maxAge: Int(Self.attemptLifetime),
                                  secure: true, httpOnly: true, sameSite: .none))
        metrics.increment("bridge_login_attempts_total")
        return response
    }

    func authorizeURL(state: String, nonce: String, clientID: String) -> String {
        let query = FormFields([
            ("client_id", clientID), ("redirect_uri", configuration.redirectURI), ("response_type", "code id_token"),
            ("scope", Self.scope), ("response_mode", "form_post"), ("state", state), ("nonce", nonce),
        ])
        return configuration.appleIDURL + "/auth/authorize?" + query.urlEncoded
    }
}
