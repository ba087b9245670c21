import AppleID
import HTTPServer
import OpenIDProvider
import SignIn
import Storage
import WebPresentation

/// An API request with a valid access token: its session and user, and what the token may do.
package struct AuthenticatedCaller: Sendable {
    package let session: Session
    package let user: User
    package let permissions: TokenPermissions

    package init(session: Session, user: User, permissions: TokenPermissions) {
        self.session = session
        self.user = user
        self.permissions = permissions
    }
}

/// Checks the `Authorization: Bearer` access token of an API call, and that its session is still live.
package struct BearerAuthentication: Sendable {
    package let accessTokens: AccessTokens
    /// What it reads and writes of the store.
    package typealias StoreRole = any SessionTransaction
    package let store: StoreAccess<StoreRole>
    package let clock: WallClock
    /// Which OpenID clients are first-party (BRIDGE_CLIENTS_FILE).
    package let clients: ClientRegistry

    package init(accessTokens: AccessTokens, store: StoreAccess<StoreRole>, clock: WallClock, clients: ClientRegistry) {
        self.accessTokens = accessTokens
        self.store = store
        self.clock = clock
        self.clients = clients
    }

    package func authenticate(_ request: Request) throws -> AuthenticatedCaller {
        let now = clock.now
        guard let token = request.bearerToken else { throw APIError.missingAccessToken }
        guard let claims = accessTokens.verify(token, now: now) else { throw APIError.invalidAccessToken }
        guard let (session, user) = try store.readOneStatement({ try $0.session(idHash: claims.sessionIDHash, now: now) }),
              session.userID == claims.userID else { throw APIError.invalidAccessToken }
        return AuthenticatedCaller(session: session, user: user,
                                   permissions: TokenPermissions(sessionFlow: session.flow, clientID: claims.clientID,
                                                                 scopes: claims.scopes, clients: clients))
    }
}
