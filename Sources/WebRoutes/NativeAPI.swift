import AppleID
import BridgeMetrics
import BridgeSettings
import Foundation
import HTTPServer
import JOSE
import JSON
import Logging
import SignIn
import Storage
import WebPresentation

/// The JSON API for apps: server nonces, sign-in with an identity token (in every field shape apps send),
/// rotating refresh tokens with reuse detection, logout, `GET /api/me` and `DELETE /api/me`.
package struct NativeAPI: Sendable {
    package static let nonceLifetime: TimeInterval = 600
    package static let accessTokenLifetime: TimeInterval = 900
    package static let idTokenFields = ["idToken", "identityToken", "id_token", "token"]
    package static let codeFields = ["authorizationCode", "authorizeCode", "code"]

    /// What it reads and writes of the store.

    package typealias StoreRole = any LoginAttemptTransaction & SessionTransaction & OpenIDProviderTransaction

    package let store: StoreAccess<StoreRole>
    package let clock: WallClock
    package let signIn: IdentityTokenSignIn
    /// APPLE_ACCEPT_UNSENT_NONCE.
    package let acceptUnsentNonce: Bool
    package let sessionIssuer: SessionIssuer
    package let accessTokens: AccessTokens
    package let accountDeletion: AccountDeletion
    package let metrics: Metrics
    package let logger: Logger

    package init(store: StoreAccess<StoreRole>, clock: WallClock, signIn: IdentityTokenSignIn, acceptUnsentNonce: Bool,
                 sessionIssuer: SessionIssuer, accessTokens: AccessTokens, accountDeletion: AccountDeletion,
                 metrics: Metrics, logger: Logger) {
        self.store = store
        self.clock = clock
        self.signIn = signIn
        self.acceptUnsentNonce = acceptUnsentNonce
        self.sessionIssuer = sessionIssuer
        self.accessTokens = accessTokens
        self.accountDeletion = accountDeletion
        self.metrics = metrics
        self.logger = logger
    }

    package func issueNonce(_ request: Request) throws -> Reply {
        let now = clock.now
        let nonce = APINonce(nonce: SignInService.serverNoncePrefix + SecretTokens.random(), createdAt: now,
                             expiresAt: now.addingTimeInterval(Self.nonceLifetime))
        return request.answer(afterWriting: { try $0.insertAPINonce(nonce) }, to: store) {
            .json(JSONValue.object([
                "nonce": .string(nonce.nonce), "expiresIn": .number(Self.nonceLifetime),
                "expiresAt": .string(ISO8601DateFormatter().string(from: nonce.expiresAt)),
            ]).serialized())
        }
    }

    /// `POST /api/auth/apple` (and `/api/auth/apple-login`, the path seed clients post to).
    package func signIn(_ request: Request) throws -> Reply {
        let body = try Self.jsonObject(request)
        guard let idToken = Self.firstString(body, Self.idTokenFields) else { throw APIError.missingIDToken }
        let nonce = Self.firstString(body, ["nonce"])
        if let deviceID = Self.firstString(body, ["deviceId"]), deviceID.unicodeScalars.count > 200 { throw APIError.invalidDeviceID }
        // A nonce the app sent must be in the token.
        let presented = IdentityTokenSignIn.Presented(idToken: idToken, code: Self.firstString(body, Self.codeFields),
                                                      expectedNonce: nonce, nonceRequired: nonce != nil)
        let (signIn, service, acceptUnsentNonce) = (signIn, signIn.service, acceptUnsentNonce)
        // Not `self` in what runs after the commit: its copy would retain every service this route holds.
        let tokens = tokenIssue
        let (metrics, logger) = (metrics, logger)
        @Sendable func rejected(_ rejection: TokenRejection) {
            metrics.increment("bridge_api_rejections_total", ["reason": rejection.code])
            logger.warning("api_sign_in_rejected", ["reason": rejection.code])
        }
        @Sendable func finish(_ identity: AppleIdentity) throws -> Reply {
            // A token made with a nonce is only redeemed with the value it was made from: otherwise a leaked, unspent
            // token (an app's, or one bound to a web login attempt) could be spent here by whoever holds it. An app
            // that made a nonce and does not send it is accepted, unverified, only where the operator said so; a
            // token for the web Services ID never is (below).
            if nonce == nil && Self.carriesNonce(verifiedToken: idToken) {
                if service.needsServerNonce(identity) { throw SignInFailure.nonceRequired }
                if !acceptUnsentNonce { throw SignInFailure.nonceNotSent }
            }
            if let claimed = Self.claimedSubject(body), !ConstantTime.equals(claimed, identity.subject) {
                throw APIError.subjectMismatch
            }
            // Refused here too, before the code exchange, so such a request spends nothing at Apple.
            if service.needsServerNonce(identity) && !SignInService.isServerNonce(nonce) { throw SignInFailure.nonceRequired }
            let signInRequest = try signIn.request(identity, presented, flow: .api, proof: .apiNonce(nonce),
                                                   displayName: DisplayName.fromAPIBody(body), grant: .appSession)
            return signIn.write(signInRequest) { signInRequest, outcome in
                let signedIn = try service.completeSignIn(signInRequest, outcome)
                return try tokens.response(user: signedIn.user, sessionIDHash: signedIn.sessionIDHash,
                                           refreshToken: signedIn.refreshToken ?? "", isExistingMember: !signedIn.isNewUser)
            }
        }
        if let identity = try signIn.verifiedHere(presented, rejected: rejected) { return try finish(identity) }
        return .offListener { [signIn] in try finish(try signIn.verified(presented, rejected: rejected)) }
    }

    /// Whether a token whose signature already verified has a non-empty `nonce` claim.
    package static func carriesNonce(verifiedToken token: String) -> Bool {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(parts[1]), let claims = try? JSONValue.parse(payload),
              let nonce = claims["nonce"]?.stringValue else { return false }
        return !nonce.isEmpty
    }

    package func refresh(_ request: Request) throws -> Reply {
        let body = try Self.jsonObject(request)
        guard let presented = Self.firstString(body, ["refreshToken", "refresh_token"]) else {
            throw APIError.missingRefreshToken
        }
        let presentation = SessionIssuer.presentation(of: presented, by: .app, now: clock.now)
        return request.answer(afterWriting: { [sessionIssuer] in
            try sessionIssuer.rotate(presentation, in: $0, refusingAnotherHoldersWith: APIError.invalidRefreshToken)
        }, to: store) { [sessionIssuer, tokens = tokenIssue] rotation in
            switch rotation {
            case let .rotated(user, sessionIDHash, refreshToken, _):
                return try tokens.response(user: user, sessionIDHash: sessionIDHash, refreshToken: refreshToken, isExistingMember: true)
            case .reused:
                sessionIssuer.recordReuse()
                throw APIError.refreshTokenReused
            case .sessionGone, .expiredOrUnknown, .revoked:
                throw APIError.invalidRefreshToken
            }
        }
    }

    package func logout(_ request: Request, _ caller: AuthenticatedCaller) throws -> Reply {
        let idHash = caller.session.idHash
        return request.answer(afterWriting: { try $0.deleteSession(idHash: idHash) }, to: store) { [logger] _ in
            logger.info("signed_out", ["user_id": String(caller.session.userID), "flow": "api"])
            return Response(status: 204)
        }
    }

    package func me(_ request: Request, _ caller: AuthenticatedCaller) throws -> Reply {
        let (session, user) = (caller.session, caller.user)
        // A relying party's token reads only what its scopes grant; the fields it may not read are left out.
        var fields: [String: JSONValue] = [
            "memberId": .number(Double(user.id)), "sub": .string(user.providerUserID),
            "flow": .string(session.signInFlow.rawValue), "nonceVerified": .bool(session.nonceVerified),
        ]
        if caller.permissions.mayReadEmail {
            fields["email"] = user.email.map { .string($0) } ?? .null
            fields["emailVerified"] = .bool(user.emailVerified)
            fields["isPrivateEmail"] = .bool(user.isPrivateEmail)
            fields["emailForwardingEnabled"] = .bool(user.emailForwardingEnabled)
        }
        if caller.permissions.mayReadName {
            fields["displayName"] = user.displayName.map { .string($0) } ?? .null
        }
        return Reply(.json(JSONValue.object(fields).serialized()))
    }

    package func deleteMe(_ request: Request, _ caller: AuthenticatedCaller) throws -> Reply {
        guard caller.permissions.mayDeleteAccount else {
            throw APIError.insufficientScope("Deleting the account takes a token of the first-party app, not of another relying party.")
        }
        return try accountDeletion.reply(deleting: caller.user.id) { result in
            .json(JSONValue.object(["deleted": true, "appleRevocation": .string(result.rawValue)]).serialized())
        }
    }

    private var tokenIssue: TokenIssue { TokenIssue(accessTokens: accessTokens, clock: clock) }

    /// What an answer carrying tokens needs, and no more of the route.
    package struct TokenIssue: Sendable {
        package let accessTokens: AccessTokens
        package let clock: WallClock

        package init(accessTokens: AccessTokens, clock: WallClock) {
            self.accessTokens = accessTokens
            self.clock = clock
        }

        package func response(user: User, sessionIDHash: String, refreshToken: String, isExistingMember: Bool) throws -> Response {
            .json(JSONValue.object([
                "accessToken": .string(try accessTokens.issue(userID: user.id, sessionIDHash: sessionIDHash, now: clock.now)),
                "refreshToken": .string(refreshToken), "tokenType": "Bearer",
                "expiresIn": .number(NativeAPI.accessTokenLifetime), "memberId": .number(Double(user.id)),
                "isExistingMember": .bool(isExistingMember),
            ]).serialized())
        }
    }
}
