import AppleID
import Foundation
import HTTPServer
import JOSE
import JSON
import Mustache
import Storage

/// `GET /login` and `POST /apple_redirect`: the form_post flow and the webview-native callback.
extension BridgeApp {
    static let scope = "name email"

    func authorizeURL(state: String, nonce: String, clientID: String) -> String {
        let query = FormFields([
            ("client_id", clientID), ("redirect_uri", configuration.redirectURI), ("response_type", "code id_token"),
            ("scope", Self.scope), ("response_mode", "form_post"), ("state", state), ("nonce", nonce),
        ])
        return configuration.appleIDURL + "/auth/authorize?" + query.urlEncoded
    }

    func loginPage(_ request: Request) throws -> Response {
        // Without a Services ID there is no web flow, but an app's webview can still take state and nonce
        // from the page and sign in natively with its bundle ID.
        guard configuration.servicesID != nil || !configuration.bundleIDs.isEmpty else {
            return pages.render("login", status: 503, ["title": "Sign in", "webConfigured": false, "showButton": false])
        }
        let verdict = signInRateLimiter.admit(request.clientAddress, now: clock.now)
        guard verdict.allowed else {
            var response = pages.error(status: 429, heading: "Too many sign-in attempts",
                                       message: "Please wait \(verdict.retryAfter) seconds and try again.", retryURL: nil)
            response.headers.set("Retry-After", String(verdict.retryAfter))
            return response
        }
        let now = clock.now
        let attempt = LoginAttempt(state: Tokens.random(), nonce: Tokens.random(), bindingHash: "",
                                   createdAt: now, expiresAt: now.addingTimeInterval(Self.loginAttemptLifetime),
                                   consumedAt: nil)
        let binding = Tokens.random()
        // Only digests are stored: a copy of the database holds no live state, and lookups never touch the value.
        var stored = attempt
        stored.state = Tokens.digest(attempt.state)
        stored.bindingHash = Tokens.digest(binding)
        try store.write { try $0.insertLoginAttempt(stored) }

        var response = pages.render("login", [
            "title": "Sign in", "webConfigured": .bool(configuration.servicesID != nil), "showButton": true,
            "authorizeURL": .string(configuration.servicesID.map {
                authorizeURL(state: attempt.state, nonce: attempt.nonce, clientID: $0)
            } ?? "#"),
            "state": .string(attempt.state), "nonce": .string(attempt.nonce),
            "redirectURI": .string(configuration.redirectURI), "clientID": .string(configuration.servicesID ?? ""),
            "scope": .string(Self.scope), "useJSSDK": .bool(configuration.useJSSDK),
        ])
        // SameSite=None: Apple's form_post is a cross-site POST, which a Lax cookie would not accompany.
        response.setCookie(Cookie(name: CookieNames.binding(forState: attempt.state), value: binding,
                                  path: CookieNames.bindingPath, maxAge: Int(Self.loginAttemptLifetime),
                                  secure: true, httpOnly: true, sameSite: .none))
        metrics.increment("bridge_login_attempts_total")
        return response
    }

    /// Field names the callback reads; anything else posted is ignored.
    static let callbackFields = ["state", "code", "id_token", "user", "error"]
    static let repostMarker = "asb_repost"

    func appleRedirect(_ request: Request) throws -> Response {
        let fields = try callbackFields(request)

        if let error = fields["error"], !error.isEmpty {
            return cancelledOrFailed(error: error)
        }
        guard let state = fields["state"], !state.isEmpty else {
            return reject(400, "missing_state", heading: "This sign-in cannot be finished",
                          message: "The answer from Apple did not say which sign-in it belongs to. Please start again.")
        }
        let now = clock.now
        let stateDigest = Tokens.digest(state)
        guard let attempt = try store.read({ try $0.loginAttempt(state: stateDigest) }),
              ConstantTime.equals(attempt.state, stateDigest) else {
            return reject(400, "unknown_state", heading: "This sign-in cannot be finished",
                          message: "We do not know this sign-in. It may have been started on another server or already cleaned up. Please start again.")
        }
        if attempt.consumedAt != nil {
            return reject(400, "state_used", heading: "This sign-in was already used",
                          message: "Each sign-in link works once. If you are not signed in, please start again.")
        }
        if attempt.expiresAt <= now {
            return reject(400, "state_expired", heading: "This sign-in has expired",
                          message: "Sign-ins must be finished within 10 minutes. Please start again.")
        }

        switch bindingCheck(request, state: state, attempt: attempt, fields: fields) {
        case .bound:
            break
        case .cookieDropped:
            metrics.increment("bridge_callback_reposts_total")
            return repostPage(fields)
        case .otherBrowser:
            return reject(403, "state_other_browser", heading: "This sign-in was started in another browser",
                          message: "For your safety a sign-in must be finished in the browser that started it. Please start again here.")
        }

        guard let idToken = fields["id_token"], !idToken.isEmpty else {
            return reject(400, "missing_id_token", heading: "This sign-in cannot be finished",
                          message: "Apple's answer did not include an identity token. Please start again.")
        }
        let identity: AppleIdentity
        do {
            identity = try verifier.verify(idToken, context: VerificationContext(expectedNonce: attempt.nonce,
                                                                                   authorizationCode: fields["code"]))
        } catch {
            return reject(error.httpStatus, error.code, heading: error == .keysUnavailable
                              ? "Apple cannot be reached right now" : "We could not verify your Apple sign-in",
                          message: error.userMessage, detail: "Reason: \(error.description).")
        }

        let flow: SignInFlow = identity.audience == configuration.servicesID ? .web : .webviewNative
        let exchange = exchangeCode(fields["code"], identity: identity, flow: flow)
        switch exchangeRefusal(exchange, codeSent: !(fields["code"] ?? "").isEmpty) {
        case nil:
            break
        case .missingCode?:
            return reject(400, "missing_code", heading: "This sign-in cannot be finished",
                          message: "Apple's answer did not include an authorization code, which this service requires. Please start again.")
        case .appleUnavailable?:
            return reject(503, "code_exchange_unavailable", heading: "Apple cannot be reached right now",
                          message: "We could not confirm your sign-in with Apple. Please try again in a minute.")
        case .serverMisconfigured?:
            return reject(502, "apple_rejected_server", heading: "Sign in with Apple is misconfigured here",
                          message: "Apple did not accept this service's credentials, so sign-in cannot finish. The site's operators have been told in their logs.")
        case .codeRefused?:
            return reject(401, "code_exchange_failed", heading: "Apple did not confirm this sign-in",
                          message: "Apple did not confirm the sign-in code, so you have not been signed in. Please start again.")
        }
        let displayName = Self.displayName(fromUserJSON: fields["user"])
        let sessionID = Tokens.random()
        let outcome: SignInOutcome
        do {
            outcome = try store.write { transaction in
            guard try transaction.consumeLoginAttempt(state: stateDigest, now: now) else { return .stateAlreadyUsed }
            try recordTokenUse(idToken, identity: identity, transaction: transaction, now: now)
            let (user, created) = try transaction.upsertAppleUser(Self.profile(identity, displayName: displayName), now: now)
            try storeAppleToken(exchange, userID: user.id, clientID: identity.audience, transaction: transaction, now: now)
            try transaction.insertSession(Session(idHash: Tokens.digest(sessionID), userID: user.id, flow: flow.rawValue,
                                                  nonceVerified: identity.nonceVerified, createdAt: now,
                                                  expiresAt: now.addingTimeInterval(Self.sessionLifetime)))
            return .signedIn(user: user, created: created)
            }
        } catch let error as APIError where error.code == "token_replayed" {
            discard(exchange, clientID: identity.audience)
            return reject(409, "token_replayed", heading: "This Apple sign-in was already used",
                          message: "Each answer from Apple can sign you in once. Please start again.")
        } catch {
            discard(exchange, clientID: identity.audience)
            throw error
        }
        guard case let .signedIn(user, created) = outcome else {
            discard(exchange, clientID: identity.audience)
            return reject(400, "state_used", heading: "This sign-in was already used",
                          message: "Each sign-in link works once. If you are not signed in, please start again.")
        }

        metrics.increment("bridge_sign_ins_total", ["flow": flow.rawValue])
        logger.info("signed_in", ["user_id": String(user.id), "flow": flow.rawValue, "new_user": String(created),
                                  "nonce_verified": String(identity.nonceVerified)])
        var response = Response.redirect(to: "/session")
        response.setCookie(sessionCookie(sessionID))
        response.setCookie(.expired(CookieNames.binding(forState: state), path: CookieNames.bindingPath, sameSite: .none))
        return response
    }

    enum SignInOutcome {
        case signedIn(user: User, created: Bool)
        case stateAlreadyUsed
    }

    enum Binding {
        case bound, cookieDropped, otherBrowser
    }

    /// Fields from a urlencoded body, or from the query string of a bodiless POST (the webview bridge of seed 004).
    func callbackFields(_ request: Request) throws -> FormFields {
        if !request.body.isEmpty {
            guard let form = request.formBody else {
                throw HTTPError(415, "Apple's answer must be sent as a form (application/x-www-form-urlencoded).")
            }
            return form
        }
        return request.query
    }

    func bindingCheck(_ request: Request, state: String, attempt: LoginAttempt, fields: FormFields) -> Binding {
        let cookies = request.cookies
        if let value = cookies[CookieNames.binding(forState: state)] {
            return ConstantTime.equals(Tokens.digest(value), attempt.bindingHash) ? .bound : .otherBrowser
        }
        // No cookie for this attempt. A browser that has cookies for other attempts is another browser; one
        // with none may have dropped the cross-site cookie, so it gets one same-origin re-POST, not more.
        let hasOtherBindings = cookies.keys.contains { $0.hasPrefix(CookieNames.bindingPrefix) }
        if hasOtherBindings || fields[Self.repostMarker] != nil { return .otherBrowser }
        return .cookieDropped
    }

    func repostPage(_ fields: FormFields) -> Response {
        var posted: [MustacheValue] = Self.callbackFields.compactMap { name in
            fields[name].map { .object(["name": .string(name), "value": .string($0)]) }
        }
        posted.append(.object(["name": .string(Self.repostMarker), "value": "1"]))
        var response = pages.render("repost", ["title": "Finishing sign-in", "action": "/apple_redirect", "fields": .array(posted)])
        response.headers.set("Cache-Control", "no-store")  // it holds the identity token and code
        return response
    }

    func cancelledOrFailed(error: String) -> Response {
        if error == "user_cancelled_authorize" {
            metrics.increment("bridge_callback_rejections_total", ["reason": "user_cancelled"])
            logger.info("sign_in_cancelled")
            return pages.error(status: 200, heading: "Sign-in cancelled",
                               message: "You cancelled signing in with Apple. Nothing was changed. You can try again whenever you like.")
        }
        let known = ["invalid_request", "invalid_client", "invalid_grant", "unauthorized_client",
                     "unsupported_response_type", "invalid_scope", "access_denied"]
        let code = known.contains(error) ? error : "other"
        return reject(400, "apple_error_\(code)", heading: "Apple could not complete the sign-in",
                      message: "Apple reported a problem (\(code)). Please try again; if it keeps happening, tell the site's operators.")
    }

    func reject(_ status: Int, _ reason: String, heading: String, message: String, detail: String? = nil) -> Response {
        metrics.increment("bridge_callback_rejections_total", ["reason": reason])
        logger.warning("sign_in_rejected", ["reason": reason, "status": String(status)])
        return pages.error(status: status, heading: heading, message: message, detail: detail)
    }

    static func profile(_ identity: AppleIdentity, displayName: String?) -> AppleUserProfile {
        AppleUserProfile(sub: identity.subject, email: identity.email, emailVerified: identity.emailVerified,
                         isPrivateEmail: identity.isPrivateEmail, displayName: displayName)
    }

    /// The name from Apple's unsigned `user` JSON (first sign-in only). Only the name is taken, never the email.
    static func displayName(fromUserJSON text: String?) -> String? {
        guard let text, !text.isEmpty, text.utf8.count <= 4096, let json = try? JSONValue.parse(Array(text.utf8)) else {
            return nil
        }
        let parts = [json["name"]?["firstName"]?.stringValue, json["name"]?["lastName"]?.stringValue]
            .compactMap { $0?.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
        let name = parts.joined(separator: " ")
        guard !name.isEmpty else { return nil }
        return String(name.prefix(200)).filter { !$0.isNewline && $0.asciiValue.map { $0 >= 0x20 } ?? true }
    }
}
