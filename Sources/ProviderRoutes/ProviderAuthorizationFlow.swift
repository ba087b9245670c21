import AppleID
import BridgeMetrics
import BridgeSettings
import Foundation
import HTTPServer
import JOSE
import Logging
import Mustache
import OpenIDProvider
import SignIn
import Storage
import TextBytes
import WebPresentation
import WebRoutes

/// The authorization endpoint and its end. A relying party's request is checked; a browser whose session may be used
/// gets its code at once (single sign-on), and any other is shown the bridge's own login page, whose login attempt
/// keeps the request beside it in the database; once Apple's answer is verified the browser goes back to the client
/// with a single-use code, in the redirect URI's query or as a form posted there.
package struct ProviderAuthorizationFlow: ClientSignIns {
    package static let codeLifetime: TimeInterval = 60

    package let configuration: BridgeConfiguration
    /// What it reads and writes of the store.
    package typealias StoreRole = any LoginAttemptTransaction & OpenIDProviderTransaction & RateLimitTransaction
    package let store: StoreAccess<StoreRole>
    package let clock: WallClock
    package let login: LoginPage
    package let rateLimit: SignInRateLimit
    package let pages: Pages
    package let idTokens: ProviderTokens
    package let keys: ProviderKeyRing
    package let metrics: Metrics
    package let logger: Logger

    package init(configuration: BridgeConfiguration, store: StoreAccess<StoreRole>, clock: WallClock, login: LoginPage,
                 rateLimit: SignInRateLimit, pages: Pages, idTokens: ProviderTokens, keys: ProviderKeyRing,
                 metrics: Metrics, logger: Logger) {
        self.configuration = configuration
        self.store = store
        self.clock = clock
        self.login = login
        self.rateLimit = rateLimit
        self.pages = pages
        self.idTokens = idTokens
        self.keys = keys
        self.metrics = metrics
        self.logger = logger
    }

    /// `GET` and `POST /oauth/authorize` (OpenID Connect Core 3.1.2.1 takes both; a POST's parameters are its form).
    package func authorize(_ request: Request, _ visit: SignedInVisit?) throws -> Reply {
        let parameters = try Self.parameters(of: request)
        let authorization: AuthorizationRequest
        do {
            authorization = try AuthorizationRequest.validate({ parameters[$0] }, repeated: parameters.repeatedNames,
                                                             clients: configuration.clients)
        } catch let .redirect(error, description, redirectURI, state) {
            metrics.increment("bridge_oidc_authorize_refusals_total", ["error": error])
            return Reply(answer(to: redirectURI, mode: ResponseMode.requested { parameters[$0] },
                                ["error": error, "error_description": description], state: state))
        } catch {
            metrics.increment("bridge_oidc_authorize_refusals_total", ["error": "invalid_client_or_redirect_uri"])
            return Reply(pages.error(status: 400, heading: "This sign-in link is not valid",
                                     message: Self.wording(error), retryURL: nil))
        }
        func refuse(_ error: String, _ description: String) -> Reply {
            metrics.increment("bridge_oidc_authorize_refusals_total", ["error": error])
            return Reply(answer(to: authorization, ["error": error, "error_description": description]))
        }
        guard login.isConfigured else {
            return refuse("temporarily_unavailable", "Sign in with Apple is not configured for the web")
        }
        var hint: IDTokenHint?
        if let token = authorization.idTokenHint {
            hint = idTokens.idTokenHint(token, publicKey: keys.publicKey)
            if hint == nil { return refuse("invalid_request", "id_token_hint is not an ID token this provider issued") }
        }
        if let visit, let session = usableSession(visit, for: authorization, hint: hint) {
            return try handOver(request, authorization, to: session)
        }
        if authorization.prompt.contains(.none) {
            return refuse("login_required", "the person must sign in first")
        }
        metrics.increment("bridge_oidc_authorizations_started_total", ["client_id": authorization.client.clientID])
        let languageQuery = FormFields(parameters.pairs.filter { !$0.name.hasSameUTF8(as: "lang") }).urlEncoded
        return try login.show(request, for: { stateDigest, now in
            ProviderAuthorization(stateHash: stateDigest, clientID: authorization.client.clientID,
                                  redirectURI: authorization.redirectURI, clientState: authorization.state,
                                  nonce: authorization.nonce, codeChallenge: authorization.codeChallenge,
                                  scope: authorization.scopes.joined(separator: " "), createdAt: now,
                                  responseMode: authorization.responseMode.rawValue)
        }, languageQuery: languageQuery, clientRedirectURI: authorization.redirectURI)
    }

    /// The query of a GET, the form of a POST (a POST whose body is not a form is refused as a page).
    package static func parameters(of request: Request) throws -> FormFields {
        guard request.method.hasSameUTF8(as: "POST") else { return request.query }
        guard let form = request.formBody else {
            throw HTTPError(415, "An authorization request must be sent as a form (application/x-www-form-urlencoded).")
        }
        return form
    }

    /// The visit's session, when this request may use it instead of a new sign-in: not `prompt=login`, not older
    /// than `max_age`, and the member `id_token_hint` names, if any.
    package func usableSession(_ visit: SignedInVisit, for authorization: AuthorizationRequest, hint: IDTokenHint?) -> SignedInVisit? {
        if authorization.prompt.contains(.login) { return nil }
        if let maxAge = authorization.maxAge, clock.now.timeIntervalSince(visit.session.createdAt) > TimeInterval(maxAge) {
            return nil
        }
        if let hint, hint.memberID != visit.user.id { return nil }
        return visit
    }

    /// Single sign-on: a code for the signed-in member, whose `auth_time` is when the session began. Each code is a
    /// write, so it takes the sign-in rate limit's admission, in the same transaction, as a login page's attempt does.
    package func handOver(_ request: Request, _ authorization: AuthorizationRequest, to visit: SignedInVisit) throws -> Reply {
        let stored = ProviderAuthorization(
            stateHash: "", clientID: authorization.client.clientID, redirectURI: authorization.redirectURI,
            clientState: authorization.state, nonce: authorization.nonce, codeChallenge: authorization.codeChallenge,
            scope: authorization.scopes.joined(separator: " "), createdAt: clock.now,
            responseMode: authorization.responseMode.rawValue)
        let issued = issueCode(for: stored, authTime: visit.session.createdAt)
        let user = visit.user
        metrics.increment("bridge_oidc_single_sign_ons_total", ["client_id": authorization.client.clientID])
        let admission = rateLimit.admission(of: request)
        return request.answer(afterWriting: { transaction in
            try admission.admit(in: transaction)
            try issued.store(transaction, user)
        }, to: store, isolation: RateLimitAdmission.isolation) { [self] in
            handOver(issued, userID: user.id)
        }
    }

    /// The single-use code an OpenID client's sign-in hands back: `store` is written inside the sign-in's own
    /// transaction (`SignInRequest.alongside`), or alone for a session's code, and `handOver` sends the browser back
    /// to the client once it committed.

    /// `authTime`: when the member signed in (now, for a code its sign-in issues).
    package func issueCode(for authorization: ProviderAuthorization, authTime: Date? = nil) -> ClientCode {
        let now = clock.now
        let code = SecretTokens.random()
        return ClientCode(code: code, authorization: authorization) { transaction, user in
            try transaction.insertAuthorizationCode(AuthorizationCodeRecord(
                codeHash: SecretTokens.digest(code), clientID: authorization.clientID, redirectURI: authorization.redirectURI,
                codeChallenge: authorization.codeChallenge, scope: authorization.scope, nonce: authorization.nonce,
                userID: user.id, authTime: authTime ?? now, createdAt: now, expiresAt: now.addingTimeInterval(Self.codeLifetime)))
        }
    }

    /// The answer that hands the client its code, once the write that stored it committed.
    package func handOver(_ issued: ClientCode, userID: Int64) -> Response {
        let authorization = issued.authorization
        metrics.increment("bridge_oidc_codes_issued_total", ["client_id": authorization.clientID])
        logger.info("oidc_code_issued", ["client_id": authorization.clientID, "user_id": String(userID)])
        return answer(to: authorization, ["code": issued.code])
    }

    /// Apple reported an error (the person cancelled): when the attempt belongs to a provider authorization, the
    /// client hears `access_denied` on its redirect URI (once the attempt is spent; the listener thread is not held
    /// while that waits for its commit); nil otherwise.
    package func appleError(_ request: Request, _ fields: FormFields, appleError: String) throws -> Reply? {
        guard let state = fields["state"], !state.isEmpty else { return nil }
        let stateHash = SecretTokens.digest(state)
        guard let authorization = try store.read({ try $0.providerAuthorization(stateHash: stateHash) }) else { return nil }
        let now = clock.now
        return request.answer(afterWriting: { try $0.consumeLoginAttempt(state: stateHash, now: now) }, to: store) {
            [self] consumed in
            guard consumed else { throw SignInFailure.loginAttemptAlreadyUsed }
            let cancelled = appleError == AppleOAuthError.userCancelledAuthorize.rawValue
            let (error, description) = cancelled ? ("access_denied", "the person cancelled Sign in with Apple")
                : ("server_error", "Sign in with Apple did not complete")
            return answer(to: authorization, ["error": error, "error_description": description])
        }
    }

    package func answer(to authorization: ProviderAuthorization, _ parameters: [String: String]) -> Response {
        answer(to: authorization.redirectURI, mode: ResponseMode(rawValue: authorization.responseMode) ?? .query, parameters,
               state: authorization.clientState)
    }

    package func answer(to authorization: AuthorizationRequest, _ parameters: [String: String]) -> Response {
        answer(to: authorization.redirectURI, mode: authorization.responseMode, parameters, state: authorization.state)
    }

    /// The client's (already validated) redirect URI gets `parameters`, `iss` (RFC 9207) and the client's `state`:
    /// in its query by a 303, or (`form_post`) in a form this page posts there at once.
    package func answer(to redirectURI: String, mode: ResponseMode, _ parameters: [String: String], state: String?) -> Response {
        var pairs = parameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        if let state { pairs.append(("state", state)) }
        pairs.append(("iss", configuration.publicURL))
        var response: Response
        switch mode {
        case .query:
            response = Response.redirect(to: RedirectURI.appending(pairs, to: redirectURI))
        case .formPost:
            let fields: [MustacheValue] = pairs.map { .object(["name": .string($0.0), "value": .string($0.1)]) }
            response = pages.render("repost", ["action": .string(redirectURI), "fields": .array(fields)])
            response.headers.set("Content-Security-Policy", ContentSecurityPolicy.formPost(to: redirectURI))
        }
        response.headers.set("Cache-Control", "no-store")
        return response
    }

    package static func wording(_ refusal: any Error) -> String {
        switch refusal as? AuthorizationRefusal {
        case .missingRedirectURI?: "The app that sent you here did not say where to return (redirect_uri is missing)."
        case .unregisteredRedirectURI?: "The app that sent you here asked to return to an address it has not registered, so nothing was sent there."
        case .repeatedClientOrRedirectURI?: "The sign-in link names its app or its return address more than once, so nothing was sent there."
        default: "The app that sent you here is not known to this sign-in service (unknown client_id)."
        }
    }
}
