import AppleID
import BridgeSettings
import Foundation
import HTTPServer
import JSON
import Logging
import OpenIDProvider
import SignIn
import Storage
import TextBytes
import WebPresentation
import WebRoutes

/// `GET|POST /oauth/userinfo` (Bearer access token, its session still live) and `POST /oauth/revoke` (RFC 7009).
package struct ProviderUserinfo: Sendable {
    /// What it reads and writes of the store.
    package typealias StoreRole = any OpenIDProviderTransaction & SessionTransaction
    package let store: StoreAccess<StoreRole>
    package let clock: WallClock
    package let accessTokens: AccessTokens
    package let clientAuthentication: ProviderClientAuthentication
    package let logger: Logger

    package init(store: StoreAccess<StoreRole>, clock: WallClock, accessTokens: AccessTokens,
                 clientAuthentication: ProviderClientAuthentication, logger: Logger) {
        self.store = store
        self.clock = clock
        self.accessTokens = accessTokens
        self.clientAuthentication = clientAuthentication
        self.logger = logger
    }

    package static func subject(_ user: User) -> TokenSubject {
        TokenSubject(memberID: user.id, appleSubject: user.providerUserID, email: user.email,
                     emailVerified: user.emailVerified, isPrivateEmail: user.isPrivateEmail, name: user.displayName)
    }

    package func userinfo(_ request: Request) throws -> Response {
        let now = clock.now
        guard let token = request.bearerToken else { throw OAuthRefusal.missingToken("the access token is missing") }
        guard let claims = accessTokens.verify(token, now: now) else {
            throw OAuthRefusal.invalidToken("the access token is invalid or expired")
        }
        guard let (session, user) = try store.readOneStatement({ try $0.session(idHash: claims.sessionIDHash, now: now) }),
              session.userID == claims.userID else { throw OAuthRefusal.invalidToken("the session has ended") }
        let permissions = TokenPermissions(sessionFlow: session.flow, clientID: claims.clientID, scopes: claims.scopes,
                                           clients: clientAuthentication.clients)
        guard permissions.mayReadUserinfo else {
            throw OAuthRefusal.insufficientScope("the access token was not issued with the openid scope")
        }
        var response = Response.json(JSONValue.object(Self.subject(user).claims(scopes: claims.scopes)).serialized())
        response.headers.set("Cache-Control", "no-store")
        return response
    }

    /// Revokes a refresh token's family (and its session) or an access token's session, when they belong to the
    /// calling client. Answers 200 whatever the token was, as RFC 7009 §2.2 asks.
    /// The listener thread serves other connections while the write waits for its commit.
    package func revoke(_ request: Request) throws -> Reply {
        guard let form = request.formBody else { throw OAuthRefusal.invalidRequest("the body must be a form") }
        if let repeated = form.repeatedNames.intersection(["token", "token_type_hint", "client_id", "client_secret"]).sorted().first {
            throw OAuthRefusal.invalidRequest("the parameter \(repeated) is repeated")  // RFC 6749 §3.1
        }
        let client = try clientAuthentication.authenticate(request, form)
        guard let token = form["token"], !token.isEmpty else { throw OAuthRefusal.invalidRequest("token is missing") }
        let now = clock.now
        let (clientID, accessClaims) = (client.clientID, accessTokens.verify(token, now: now))
        return request.answer(afterWriting: { transaction in
            if let claims = accessClaims {
                if claims.clientID.hasSameUTF8(as: clientID) { _ = try transaction.deleteSession(idHash: claims.sessionIDHash) }
                return
            }
            guard let family = try transaction.refreshTokenFamily(tokenHash: SecretTokens.digest(token)),
                  try transaction.providerGrant(familyID: family)?.clientID.hasSameUTF8(as: clientID) == true else { return }
            try transaction.revokeRefreshFamily(family, becauseReused: false)
        }, to: store) { [logger] in
            logger.info("oidc_token_revoked", ["client_id": clientID])
            var response = Response(status: 200)
            response.headers.set("Cache-Control", "no-store")
            return response
        }
    }
}
