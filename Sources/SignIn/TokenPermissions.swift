import OpenIDProvider

/// What an access token may do, from the session it belongs to, the client it was issued to and the scopes it
/// carries. The JSON API's own tokens and those of a client marked `first_party` in BRIDGE_CLIENTS_FILE act for the
/// member in full; any other relying party's token does only what its scopes grant, and never deletes the account.
/// Which is which is decided by how the server opened the token's session (`Session.flow`), never by the token's
/// `client_id` alone: a client could be registered under any id.
package struct TokenPermissions: Equatable, Sendable {
    package let isFirstParty: Bool
    package let scopes: Set<String>

    /// `sessionFlow`: the flow of the token's session, as stored.
    package init(sessionFlow: String, clientID: String, scopes: [String], clients: ClientRegistry) {
        switch sessionFlow {
        case SignInFlow.api.rawValue:
            isFirstParty = true
        case SignInFlow.providerSession:
            isFirstParty = clients.client(clientID)?.isFirstParty == true
        default:
            isFirstParty = false
        }
        self.scopes = Set(scopes)
    }

    /// `/oauth/userinfo` is the OpenID Connect endpoint: it needs `openid` (OpenID Connect Core §5.3).
    package var mayReadUserinfo: Bool { scopes.contains("openid") }

    /// The member's email address and its flags in `/api/me`.
    package var mayReadEmail: Bool { isFirstParty || scopes.contains("email") }

    /// The member's name in `/api/me`.
    package var mayReadName: Bool { isFirstParty || Scopes.grantsName(scopes) }

    /// `DELETE /api/me`.
    package var mayDeleteAccount: Bool { isFirstParty }
}
