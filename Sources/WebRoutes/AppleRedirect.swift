import AppleID
import BridgeMetrics
import BridgeSettings
import Foundation
import HTTPServer
import JOSE
import Logging
import Mustache
import SignIn
import Storage
import WebPresentation

/// `POST /apple_redirect`: Apple's form_post (web flow), or an app's webview handing over a native sign-in's
/// result (webview flow). Checks the login attempt and its browser binding, verifies the identity token, then
/// hands it to the sign-in service.
package struct AppleRedirect: Sendable {
    /// Field names the callback reads; anything else posted is ignored.
    package static let callbackFields = ["state", "code", "id_token", "user", "error"]
    package static let repostMarker = "asb_repost"
    /// The errors Apple documents for the callback; any other is reported as "other".
    package static let reportedAppleErrors: Set<AppleOAuthError> = [
        .invalidRequest, .invalidClient, .invalidGrant, .unauthorizedClient, .unsupportedResponseType, .invalidScope,
        .accessDenied,
    ]

    package enum Binding: Equatable {
        case bound, cookieDropped, otherBrowser
    }

    /// Reads login attempts.
    /// What it reads and writes of the store.
    package typealias StoreRole = any LoginAttemptTransaction
    package let store: StoreAccess<StoreRole>
    /// Those this process stored lately: no read for them.
    package let recentAttempts: RecentLoginAttempts
    /// Web attempts' states carry the attempt: no read for them either.
    package let sealedStates: SealedLoginState
    package let lookups: AttemptLookups
    package let clock: WallClock
    package let signIn: IdentityTokenSignIn
    package let landing: SignedInLanding
    package let pages: Pages
    package let metrics: Metrics
    package let logger: Logger
    /// Finishes sign-ins that an OpenID client started at the authorization endpoint.
    package let provider: any ClientSignIns
    /// Where a repeated post of a finished sign-in goes.
    package let again: RepeatedCallback

    package init(store: StoreAccess<StoreRole>, recentAttempts: RecentLoginAttempts, sealedStates: SealedLoginState,
                 lookups: AttemptLookups, clock: WallClock, signIn: IdentityTokenSignIn, landing: SignedInLanding,
                 pages: Pages, metrics: Metrics, logger: Logger, provider: any ClientSignIns, again: RepeatedCallback) {
        self.store = store
        self.recentAttempts = recentAttempts
        self.sealedStates = sealedStates
        self.lookups = lookups
        self.clock = clock
        self.signIn = signIn
        self.landing = landing
        self.pages = pages
        self.metrics = metrics
        self.logger = logger
        self.provider = provider
        self.again = again
    }

    /// Behind `AppleCallbackGroup.formPost`. The attempt is looked up and checked once; what may call Apple, and
    /// the answer after the sign-in's write committed, follow with it.
    package func finish(_ request: Request, _ fields: FormFields) throws -> Reply {
        let (attempt, authorization, idToken): (LoginAttempt, ProviderAuthorization?, String)
        switch try check(request, fields) {
        case .answered(let reply): return reply
        case let .signIn(checkedAttempt, checkedAuthorization, checkedToken):
            (attempt, authorization, idToken) = (checkedAttempt, checkedAuthorization, checkedToken)
        }
        let presented = IdentityTokenSignIn.Presented(idToken: idToken, code: fields["code"], expectedNonce: attempt.nonce)
        // An OpenID client's sign-in: its code is stored in the sign-in's own transaction.
        let clientCode = authorization.map { provider.issueCode(for: $0, authTime: nil) }
        let (signIn, service) = (signIn, signIn.service)
        // The rest runs after the commit and captures only what it uses: capturing `self` copied every service and
        // configuration string this route holds into the closure (about 120 references retained and released per
        // sign-in). The OpenID provider only when a client's code is handed over.
        let handOver: (@Sendable (Int64) -> Response)? = if let clientCode {
            { [provider] userID in provider.handOver(clientCode, userID: userID) }
        } else {
            nil
        }
        let (recentAttempts, landing, again, stateDigest, now) = (recentAttempts, landing, again, attempt.state, clock.now)
        let invitations = landing.invitations
        let respond: @Sendable (SignInRequest, Result<SignInWritten, any Error>) throws -> Response = { signInRequest, outcome in
            switch outcome {
            case .success, .failure(SignInFailure.loginAttemptAlreadyUsed):  // spent here, or found spent elsewhere
                recentAttempts.spend(stateDigest: stateDigest, at: now)
            default:
                break
            }
            let signedIn: SignedIn
            do {
                signedIn = try service.completeSignIn(signInRequest, outcome)
            } catch SignInFailure.loginAttemptAlreadyUsed {
                // Spent meanwhile, by this browser's own first post (checked bound above) on another instance.
                return try again.land(request, stateDigest: stateDigest, authorization: authorization)
            }
            let destination = handOver?(signedIn.user.id) ?? landing.destination(request, stateDigest: stateDigest)
            return landing.response(request, sessionID: signedIn.sessionID, destination)
        }
        @Sendable func finish(_ identity: AppleIdentity) throws -> Reply {
            let flow: SignInFlow = identity.audience == signIn.service.servicesID ? .web : .webviewNative
            return signIn.write(try signIn.request(identity, presented, flow: flow, proof: .loginAttempt(stateDigest: stateDigest),
                                                   displayName: DisplayName.fromUserJSON(fields["user"]), grant: .browserSession,
                                                   alongside: invitations.spending(request, then: clientCode?.store)),
                                then: respond)
        }
        if let identity = try signIn.verifiedHere(presented) { return try finish(identity) }
        return .offListener { try finish(try signIn.verified(presented)) }
    }

    /// What the callback's checks decided: an answer already (Apple's error, a repeated post, a re-post without the
    /// binding cookie), or a sign-in to finish with the checked attempt and the presented token.
    private enum Checked {
        case answered(Reply)
        case signIn(LoginAttempt, ProviderAuthorization?, idToken: String)
    }

    /// The callback's checks, each run once: Apple's error, the login attempt, the browser's binding cookie, the token.
    private func check(_ request: Request, _ fields: FormFields) throws -> Checked {
        if let error = fields["error"], !error.isEmpty {
            if let toClient = try provider.appleError(request, fields, appleError: error) { return .answered(toClient) }
            return .answered(Reply(try appleReportedError(error)))
        }
        let (attempt, authorization) = try liveAttempt(fields)
        let binding = bindingCheck(request, attempt: attempt, fields: fields)
        if attempt.consumedAt != nil {
            // The back button or a second tap: this browser lands where its sign-in did; any other is refused.
            guard binding == .bound else { throw SignInFailure.loginAttemptAlreadyUsed }
            return .answered(Reply(try again.land(request, stateDigest: attempt.state, authorization: authorization)))
        }
        if attempt.expiresAt <= clock.now { throw PageRefusal.stateExpired }
        switch binding {
        case .bound:
            break
        case .cookieDropped:
            metrics.increment("bridge_callback_reposts_total")
            return .answered(Reply(repostPage(fields, providerRedirectURI: authorization?.redirectURI)))
        case .otherBrowser:
            throw PageRefusal.stateFromOtherBrowser
        }
        guard let idToken = fields["id_token"], !idToken.isEmpty else { throw PageRefusal.missingIDToken }
        return .signIn(attempt, authorization, idToken: idToken)
    }

    /// The login attempt of the state the callback names (known and not expired; perhaps spent), and the OpenID
    /// provider authorization it finishes, if any: remembered, opened from the sealed state (a web attempt's; a
    /// client's authorization is in the database), or both read by one statement.
    package func liveAttempt(_ fields: FormFields) throws -> (LoginAttempt, ProviderAuthorization?) {
        guard let state = fields["state"], !state.isEmpty else { throw PageRefusal.missingState }
        let stateDigest = SecretTokens.digest(state)
        let found: (attempt: LoginAttempt, authorization: ProviderAuthorization?)?
        if let remembered = recentAttempts.entry(stateDigest: stateDigest) {
            lookups.record(.memory)
            found = (remembered.attempt, remembered.authorization)
        } else if let opened = sealedStates.open(state, stateDigest: stateDigest), opened.kind == .web {
            lookups.record(.state)
            found = (opened.attempt, nil)
        } else {
            lookups.record(.database)
            found = try store.readOneStatement { try $0.loginAttemptWithAuthorization(state: stateDigest) }
        }
        guard let (attempt, authorization) = found, ConstantTime.equals(attempt.state, stateDigest) else {
            throw PageRefusal.unknownState
        }
        return (attempt, authorization)
    }

    package func bindingCheck(_ request: Request, attempt: LoginAttempt, fields: FormFields) -> Binding {
        if let value = request.cookie(landing.cookieNames.binding(forStateDigest: attempt.state)) {
            return ConstantTime.equals(SecretTokens.digest(value), attempt.bindingHash) ? .bound : .otherBrowser
        }
        // No cookie for this attempt. A browser that has cookies for other attempts is another browser; one
        // with none may have dropped the cross-site cookie, so it gets one same-origin re-POST, not more.
        let bindingPrefix = landing.cookieNames.bindingPrefix
        let hasOtherBindings = request.sentCookies.contains { $0.name.hasPrefix(bindingPrefix) }
        if hasOtherBindings || fields[Self.repostMarker] != nil { return .otherBrowser }
        return .cookieDropped
    }

    package func repostPage(_ fields: FormFields, providerRedirectURI: String?) -> Response {
        var posted: [MustacheValue] = Self.callbackFields.compactMap { name in
            fields[name].map { .object(["name": .string(name), "value": .string($0)]) }
        }
        posted.append(.object(["name": .string(Self.repostMarker), "value": "1"]))
        var response = pages.render("repost", ["action": "/apple_redirect", "fields": .array(posted)])
        response.headers.set("Cache-Control", "no-store")  // it holds the identity token and code
        response.headers.set("Content-Security-Policy", ContentSecurityPolicy.repostPage(
            providerRedirectURI: providerRedirectURI, afterSignInURL: landing.afterSignInURL,
            returnURLs: landing.returnDestination.policy))
        return response
    }

    /// Apple's `error` field: a cancel is an ordinary answer; anything else refuses the sign-in.
    package func appleReportedError(_ code: String) throws(PageRefusal) -> Response {
        let error = AppleOAuthError(rawValue: code)
        guard error == .userCancelledAuthorize else {
            throw .appleReportedError(error.flatMap { Self.reportedAppleErrors.contains($0) ? $0 : nil })
        }
        metrics.increment("bridge_callback_rejections_total", ["reason": "user_cancelled"])
        logger.info("sign_in_cancelled")
        return WebErrorPresenter(pages: pages)
            .page(WebErrorPresenter.Description(status: 200, reasonCode: "user_cancelled", wordingCode: "cancelled"))
    }
}
