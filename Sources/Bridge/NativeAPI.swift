import AppleID
import Foundation
import HTTPServer
import JOSE
import JSON
import Storage

/// The native JSON API: server nonces, sign-in with an identity token (every field shape the seeds send),
/// rotating refresh tokens with reuse detection, logout and `GET /api/me`.
extension BridgeApp {
    static let apiNonceLifetime: TimeInterval = 600
    static let apiSessionLifetime: TimeInterval = 30 * 86_400
    static let accessTokenLifetime: TimeInterval = 900

    /// Marks nonces this server issued, so one that was already cleaned up is still known as ours (expired).
    static let serverNoncePrefix = "asb."

    static let idTokenFields = ["idToken", "identityToken", "id_token", "token"]
    static let codeFields = ["authorizationCode", "authorizeCode", "code"]

    // MARK: - Handlers

    func apiNonce(_ request: Request) throws -> Response {
        try admit(request)
        let now = clock.now
        let nonce = APINonce(nonce: Self.serverNoncePrefix + Tokens.random(), createdAt: now, expiresAt: now.addingTimeInterval(Self.apiNonceLifetime))
        try store.write { try $0.insertAPINonce(nonce) }
        return .json(JSONValue.object([
            "nonce": .string(nonce.nonce), "expiresIn": .number(Self.apiNonceLifetime),
            "expiresAt": .string(ISO8601DateFormatter().string(from: nonce.expiresAt)),
        ]).serialized())
    }

    func apiSignIn(_ request: Request) throws -> Response {
        try admit(request)
        let body = try jsonObject(request)
        guard let idToken = Self.firstString(body, Self.idTokenFields) else {
            throw APIError(400, "missing_id_token", "The identity token is missing: send it as idToken (or identityToken, id_token, token).")
        }
        let code = Self.firstString(body, Self.codeFields)
        let nonce = Self.firstString(body, ["nonce"])
        let deviceID = Self.firstString(body, ["deviceId"])
        if let deviceID, deviceID.count > 200 { throw APIError(400, "invalid_device_id", "deviceId is longer than 200 characters.") }

        let identity: AppleIdentity
        do {
            identity = try verifier.verify(idToken, context: VerificationContext(
                expectedNonce: nonce, authorizationCode: code, requireNonce: nonce != nil))
        } catch {
            metrics.increment("bridge_api_rejections_total", ["reason": error.code])
            logger.warning("api_sign_in_rejected", ["reason": error.code])
            throw APIError(error.httpStatus, error.code, APIError.sentence(error.description))
        }
        if let claimed = Self.claimedSubject(body), !ConstantTime.equals(claimed, identity.subject) {
            throw APIError(401, "subject_mismatch", "The user identifier sent with the request is not the token's subject.")
        }

        // Refused here, before the code exchange, so such a request spends nothing at Apple.
        if identity.audience == configuration.servicesID && !(nonce?.hasPrefix(Self.serverNoncePrefix) ?? false) {
            throw APIError(401, "nonce_required", "A token for the web Services ID needs a nonce from /api/auth/nonce.")
        }
        let exchange = exchangeCode(code, identity: identity, flow: .api)
        switch exchangeRefusal(exchange, codeSent: code != nil) {
        case nil:
            break
        case .missingCode?:
            throw APIError(400, "missing_authorization_code", "This server requires the authorization code: send it as authorizationCode.")
        case .appleUnavailable?:
            throw APIError(503, "code_exchange_unavailable", "Apple could not be reached to confirm the authorization code; try again.")
        case .serverMisconfigured?:
            throw APIError(502, "apple_rejected_server", "Apple did not accept this server's credentials; the operators must fix the configuration (apple-signin-bridge doctor).")
        case .codeRefused?:
            throw APIError(401, "code_exchange_failed", "Apple did not accept the authorization code (expired, used, or for another app).")
        }
        let now = clock.now
        let sessionID = Tokens.random()
        let refresh = Tokens.random()
        let displayName = Self.displayName(fromAPIBody: body)
        let signedIn: (User, Bool, Bool)
        do {
            signedIn = try store.write { transaction -> (User, Bool, Bool) in
            var nonceVerified = false
            if let nonce {
                switch try transaction.consumeAPINonce(nonce, now: now) {
                case .consumed: nonceVerified = true
                case .unknown where nonce.hasPrefix(Self.serverNoncePrefix):
                    throw APIError(401, "nonce_expired", "The nonce has expired; request a new one from /api/auth/nonce.")
                case .unknown: nonceVerified = false  // the app's own nonce (seed 002): matched, but not ours
                case .expired: throw APIError(401, "nonce_expired", "The nonce has expired; request a new one from /api/auth/nonce.")
                case .alreadyUsed: throw APIError(409, "nonce_already_used", "This nonce was already used for a sign-in.")
                }
            }
            try recordTokenUse(idToken, identity: identity, transaction: transaction, now: now)
            // A Services-ID token was minted for a web sign-in; on the API it must carry a nonce this server issued,
            // or a web token intercepted before its callback could be spent here.
            if identity.audience == configuration.servicesID && !nonceVerified {
                throw APIError(401, "nonce_required", "A token for the web Services ID needs a nonce from /api/auth/nonce.")
            }
            let (user, created) = try transaction.upsertAppleUser(Self.profile(identity, displayName: displayName), now: now)
            try storeAppleToken(exchange, userID: user.id, clientID: identity.audience, transaction: transaction, now: now)
            let session = Session(idHash: Tokens.digest(sessionID), userID: user.id, flow: SignInFlow.api.rawValue,
                                  nonceVerified: nonceVerified, createdAt: now,
                                  expiresAt: now.addingTimeInterval(Self.apiSessionLifetime))
            try transaction.insertSession(session)
            try transaction.insertRefreshToken(RefreshToken(
                tokenHash: Tokens.digest(refresh), familyID: Tokens.random(), sessionIDHash: session.idHash,
                userID: user.id, createdAt: now, expiresAt: session.expiresAt))
            return (user, created, nonceVerified)
            }
        } catch {
            discard(exchange, clientID: identity.audience)
            throw error
        }
        let (user, created, nonceVerified) = signedIn
        metrics.increment("bridge_sign_ins_total", ["flow": SignInFlow.api.rawValue])
        logger.info("signed_in", ["user_id": String(user.id), "flow": "api", "new_user": String(created),
                                  "nonce_verified": String(nonceVerified)])
        return tokenResponse(user: user, sessionIDHash: Tokens.digest(sessionID), refreshToken: refresh, now: now,
                             isExistingMember: !created)
    }

    func apiRefresh(_ request: Request) throws -> Response {
        try admit(request)
        let body = try jsonObject(request)
        guard let presented = Self.firstString(body, ["refreshToken", "refresh_token"]) else {
            throw APIError(400, "missing_refresh_token", "Send the refresh token as refreshToken.")
        }
        let now = clock.now
        let replacement = Tokens.random()
        enum Outcome { case rotated(User, String), reused, invalid }
        let outcome: Outcome = try store.write { transaction in
            switch try transaction.rotateRefreshToken(tokenHash: Tokens.digest(presented), now: now) {
            case let .rotated(old):
                guard let (session, user) = try transaction.session(idHash: old.sessionIDHash, now: now) else { return .invalid }
                try transaction.insertRefreshToken(RefreshToken(
                    tokenHash: Tokens.digest(replacement), familyID: old.familyID, sessionIDHash: session.idHash,
                    userID: user.id, createdAt: now, expiresAt: session.expiresAt))
                return .rotated(user, session.idHash)
            case let .reused(old):
                // A second presentation is indistinguishable from a stolen copy, however soon it comes: end the
                // family, so whoever refreshed first (the thief, perhaps) loses it too. Clients refresh one at a time.
                try transaction.revokeRefreshFamily(old.familyID)
                return .reused
            case .expired, .unknown:
                return .invalid
            }
        }
        switch outcome {
        case let .rotated(user, sessionIDHash):
            return tokenResponse(user: user, sessionIDHash: sessionIDHash, refreshToken: replacement, now: now,
                                 isExistingMember: true)
        case .reused:
            metrics.increment("bridge_refresh_reuse_total")
            logger.warning("refresh_token_reused")
            throw APIError(401, "refresh_token_reused", "This refresh token was already used, so every token of this sign-in has been revoked. Sign in again.")
        case .invalid:
            throw APIError(401, "invalid_refresh_token", "The refresh token is unknown or expired. Sign in again.")
        }
    }

    func apiLogout(_ request: Request) throws -> Response {
        let (session, _) = try authenticate(request)
        _ = try store.write { try $0.deleteSession(idHash: session.idHash) }
        logger.info("signed_out", ["user_id": String(session.userID), "flow": "api"])
        return Response(status: 204)
    }

    func apiMe(_ request: Request) throws -> Response {
        let (session, user) = try authenticate(request)
        var fields: [String: JSONValue] = [
            "memberId": .number(Double(user.id)), "sub": .string(user.providerUserID),
            "emailVerified": .bool(user.emailVerified), "isPrivateEmail": .bool(user.isPrivateEmail),
            "flow": .string(session.flow), "nonceVerified": .bool(session.nonceVerified),
            "emailForwardingEnabled": .bool(user.emailForwardingEnabled),
        ]
        fields["email"] = user.email.map { .string($0) } ?? .null
        fields["displayName"] = user.displayName.map { .string($0) } ?? .null
        return .json(JSONValue.object(fields).serialized())
    }

    // MARK: - Pieces

    /// The session behind a Bearer access token, checked on every call.
    func authenticate(_ request: Request) throws -> (Session, User) {
        var unauthorized = APIError.unauthorized
        unauthorized.headers.set("WWW-Authenticate", "Bearer")
        guard let token = request.bearerToken, let claims = accessTokens.verify(token, now: clock.now) else { throw unauthorized }
        let now = clock.now
        guard let (session, user) = try store.read({ try $0.session(idHash: claims.sessionIDHash, now: now) }),
              session.userID == claims.userID else { throw unauthorized }
        return (session, user)
    }

    func tokenResponse(user: User, sessionIDHash: String, refreshToken: String, now: Date, isExistingMember: Bool) -> Response {
        .json(JSONValue.object([
            "accessToken": .string(accessTokens.issue(userID: user.id, sessionIDHash: sessionIDHash, now: now)),
            "refreshToken": .string(refreshToken), "tokenType": "Bearer",
            "expiresIn": .number(Self.accessTokenLifetime), "memberId": .number(Double(user.id)),
            "isExistingMember": .bool(isExistingMember),
        ]).serialized())
    }

    /// One identity token, one sign-in: its hash is kept until it expires, on every path.
    func recordTokenUse(_ token: String, identity: AppleIdentity, transaction: any StoreTransaction, now: Date) throws {
        // Remembered as long as the verifier would still accept it: its expiry plus the clock-skew leeway.
        let acceptedUntil = identity.expiresAt.addingTimeInterval(verifier.policy.leeway)
        guard try transaction.recordIdentityTokenUse(tokenHash: Tokens.digest(token), expiresAt: acceptedUntil, now: now) else {
            throw APIError(409, "token_replayed", "This identity token was already used to sign in. Sign in with Apple again to get a new one.")
        }
    }

    func admit(_ request: Request) throws {
        let verdict = signInRateLimiter.admit(request.clientAddress, now: clock.now)
        guard verdict.allowed else {
            var error = APIError(429, "rate_limited", "Too many requests; try again in \(verdict.retryAfter) seconds.")
            error.headers.set("Retry-After", String(verdict.retryAfter))
            throw error
        }
    }

    func jsonObject(_ request: Request) throws -> JSONValue {
        guard request.mediaType == "application/json" else {
            throw APIError(415, "unsupported_media_type", "Send the request body as JSON (Content-Type: application/json).")
        }
        guard let value = try? JSONValue.parse(request.body), case .object = value else {
            throw APIError(400, "malformed_json", "The request body is not a JSON object.")
        }
        return value
    }

    static func firstString(_ body: JSONValue, _ names: [String]) -> String? {
        for name in names {
            if let value = body[name]?.stringValue?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty { return value }
        }
        return nil
    }

    /// The Apple user id the app says it has (`snsUserId` of seed 000, or `user` as a plain string).
    static func claimedSubject(_ body: JSONValue) -> String? {
        if let value = firstString(body, ["snsUserId", "userIdentifier"]) { return value }
        if let user = body["user"]?.stringValue, !user.hasPrefix("{"), !user.isEmpty { return user }
        return nil
    }

    /// A display name from whatever the app sent: Apple's `user` JSON (object or string), iOS's encoded
    /// `PersonNameComponents` as `fullName`, a plain `fullName` string, or seed 000's `snsUserName`.
    /// Unsigned, so only ever a name; any email in it is ignored.
    static func displayName(fromAPIBody body: JSONValue) -> String? {
        if let user = body["user"] {
            if case .object = user, let name = nameFromComponents(user["name"]) { return name }
            if let text = user.stringValue, text.hasPrefix("{"), let name = displayName(fromUserJSON: text) { return name }
        }
        if let fullName = body["fullName"] {
            if let name = nameFromComponents(fullName) { return name }
            if let text = fullName.stringValue { return clean(text) }
        }
        return firstString(body, ["snsUserName", "name"]).flatMap(clean)
    }

    static func nameFromComponents(_ value: JSONValue?) -> String? {
        guard let value, case .object = value else { return nil }
        let given = value["firstName"]?.stringValue ?? value["givenName"]?.stringValue
        let family = value["lastName"]?.stringValue ?? value["familyName"]?.stringValue
        return clean([given, family].compactMap { $0 }.joined(separator: " "))
    }

    static func clean(_ name: String) -> String? {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines).filter { !$0.isNewline && !($0.asciiValue.map { $0 < 0x20 } ?? false) }
        return trimmed.isEmpty ? nil : String(trimmed.prefix(200))
    }
}
