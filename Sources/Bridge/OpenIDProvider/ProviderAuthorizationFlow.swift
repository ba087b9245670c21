import AppleID
import Foundation
import HTTPServer
import JOSE
import OpenIDProvider
import Storage

/// The authorization endpoint and its end: checks a relying party's request, starts the Apple sign-in exactly as
/// `/login` does (a login attempt bound to this browser, with the request kept beside it in the database), and once
/// Apple's answer verified sends the browser back to the client with a single-use code.
struct ProviderAuthorizationFlow: Sendable {
    static let codeLifetime: TimeInterval = 60

    let configuration: BridgeConfiguration
    let store: any Store
    let clock: WallClock
    let login: LoginPage
    let rateLimit: SignInRateLimit
    let pages: Pages
    let metrics: Metrics
    let logger: Logger

    /// `GET /oauth/authorize`. The rate limit's bucket and the login attempt are written in one transaction, and the
    /// listener thread serves other connections while it waits for its commit.
    func authorize(_ request: Request) throws -> Response {
        let authorization: AuthorizationRequest
        do {
            authorization = try AuthorizationRequest.validate({ request.query[$0] }, repeated: request.query.repeatedNames,
                                                             clients: configuration.clients)
        } catch let .redirect(error, description, redirectURI, state) {
            metrics.increment("bridge_oidc_authorize_refusals_total", ["error": error])
            return redirect(to: redirectURI, ["error": error, "error_description": description], state: state)
        } catch {
            metrics.increment("bridge_oidc_authorize_refusals_total", ["error": "invalid_client_or_redirect_uri"])
            return pages.error(status: 400, heading: "This sign-in link is not valid",
                               message: Self.wording(error), retryURL: nil)
        }
        guard let servicesID = configuration.servicesID else {
            return redirect(to: authorization.redirectURI, ["error": "temporarily_unavailable",
                                                            "error_description": "Sign in with Apple is not configured for the web"],
                            state: authorization.state)
        }
        return try startAppleSignIn(request, authorization, servicesID: servicesID)
    }

    private func startAppleSignIn(_ request: Request, _ authorization: AuthorizationRequest,
                                  servicesID: String) throws -> Response {
        let now = clock.now
        let (state, nonce, binding) = (SecretTokens.random(), SecretTokens.random(), SecretTokens.random())
        let stateHash = SecretTokens.digest(state)
        let admission = rateLimit.admission(of: request)
        let attempt = LoginAttempt(state: stateHash, nonce: nonce, bindingHash: SecretTokens.digest(binding), createdAt: now,
                                   expiresAt: now.addingTimeInterval(LoginPage.attemptLifetime), consumedAt: nil)
        let providerAuthorization = ProviderAuthorization(
            stateHash: stateHash, clientID: authorization.client.clientID, redirectURI: authorization.redirectURI,
            clientState: authorization.state, nonce: authorization.nonce, codeChallenge: authorization.codeChallenge,
            scope: authorization.scopes.joined(separator: " "), createdAt: now)
        return try request.answer(afterWriting: { transaction in
            try admission.admit(in: transaction)
            try transaction.insertLoginAttempt(attempt)
            try transaction.insertProviderAuthorization(providerAuthorization)
        }, to: store) { [self] in
            login.recentAttempts.remember(attempt, authorization: providerAuthorization)
            var response = Response.redirect(to: login.authorizeURL(state: state, nonce: nonce, clientID: servicesID))
            // The same binding cookie as /login sets: Apple's form_post must come back in this browser.
            response.setCookie(LoginPage.bindingCookie(configuration.cookieNames, state: state, binding: binding))
            response.headers.set("Cache-Control", "no-store")
            metrics.increment("bridge_oidc_authorizations_started_total", ["client_id": authorization.client.clientID])
            return response
        }
    }

    /// The single-use code an OpenID client's sign-in hands back: `store` is written inside the sign-in's own
    /// transaction (`SignInRequest.alongside`), and `redirect` sends the browser back to the client once it committed.
    struct IssuedCode: Sendable {
        let code: String
        let authorization: ProviderAuthorization
        let store: @Sendable (any StoreTransaction, User) throws -> Void
    }

    func issueCode(for authorization: ProviderAuthorization) -> IssuedCode {
        let now = clock.now
        let code = SecretTokens.random()
        return IssuedCode(code: code, authorization: authorization) { transaction, user in
            try transaction.insertAuthorizationCode(AuthorizationCodeRecord(
                codeHash: SecretTokens.digest(code), clientID: authorization.clientID, redirectURI: authorization.redirectURI,
                codeChallenge: authorization.codeChallenge, scope: authorization.scope, nonce: authorization.nonce,
                userID: user.id, authTime: now, createdAt: now, expiresAt: now.addingTimeInterval(Self.codeLifetime)))
        }
    }

    /// The redirect that hands the client its code, once the sign-in that stored it committed.
    func redirect(handingOver issued: IssuedCode, userID: Int64) -> Response {
        let authorization = issued.authorization
        metrics.increment("bridge_oidc_codes_issued_total", ["client_id": authorization.clientID])
        logger.info("oidc_code_issued", ["client_id": authorization.clientID, "user_id": String(userID)])
        return redirect(to: authorization.redirectURI, ["code": issued.code], state: authorization.clientState)
    }

    /// Apple reported an error (the person cancelled): when the attempt belongs to a provider authorization, the
    /// client hears `access_denied` on its redirect URI (once the attempt is spent; the listener thread is not held
    /// while that waits for its commit); nil otherwise.
    func appleError(_ request: Request, _ fields: FormFields, appleError: String) throws -> Response? {
        guard let state = fields["state"], !state.isEmpty else { return nil }
        let stateHash = SecretTokens.digest(state)
        guard let authorization = try store.read({ try $0.providerAuthorization(stateHash: stateHash) }) else { return nil }
        let now = clock.now
        return try request.answer(afterWriting: { try $0.consumeLoginAttempt(state: stateHash, now: now) }, to: store) {
            [self] consumed in
            guard consumed else { throw SignInFailure.loginAttemptAlreadyUsed }
            let cancelled = appleError == AppleOAuthError.userCancelledAuthorize.rawValue
            let (error, description) = cancelled ? ("access_denied", "the person cancelled Sign in with Apple")
                : ("server_error", "Sign in with Apple did not complete")
            return redirect(to: authorization.redirectURI, ["error": error, "error_description": description],
                            state: authorization.clientState)
        }
    }

    /// A 303 to the client's (already validated) redirect URI with `iss` (RFC 9207) and the client's `state`.
    func redirect(to redirectURI: String, _ parameters: [String: String], state: String?) -> Response {
        var pairs = parameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        if let state { pairs.append(("state", state)) }
        pairs.append(("iss", configuration.publicURL))
        var response = Response.redirect(to: RedirectURI.appending(pairs, to: redirectURI))
        response.headers.set("Cache-Control", "no-store")
        return response
    }

    static func wording(_ refusal: any Error) -> String {
        switch refusal as? AuthorizationRefusal {
        case .missingRedirectURI?: "The app that sent you here did not say where to return (redirect_uri is missing)."
        case .unregisteredRedirectURI?: "The app that sent you here asked to return to an address it has not registered, so nothing was sent there."
        case .repeatedClientOrRedirectURI?: "The sign-in link names its app or its return address more than once, so nothing was sent there."
        default: "The app that sent you here is not known to this sign-in service (unknown client_id)."
        }
    }
}
