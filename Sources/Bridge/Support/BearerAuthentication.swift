import AppleID
import HTTPServer
import OpenIDProvider
import Storage

/// An API request with a valid access token: its session and user, and what the token may do.
struct AuthenticatedCaller: Sendable {
    let session: Session
    let user: User
    let permissions: TokenPermissions
}

/// Checks the `Authorization: Bearer` access token of an API call, and that its session is still live.
struct BearerAuthentication: Sendable {
    let accessTokens: AccessTokens
    let store: any Store
    let clock: WallClock
    /// Which OpenID clients are first-party (BRIDGE_CLIENTS_FILE).
    let clients: ClientRegistry

    func authenticate(_ request: Request) throws -> AuthenticatedCaller {
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
