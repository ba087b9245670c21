import OpenIDProvider

/// What an access token may do, from the client it was issued to and the scopes it carries. The JSON API's own
/// tokens and those of a client marked `first_party` in BRIDGE_CLIENTS_FILE act for the member in full; any other
/// relying party's token does only what its scopes grant, and never deletes the account.
struct TokenPermissions: Equatable, Sendable {
    let isFirstParty: Bool
    let scopes: Set<String>

    init(clientID: String, scopes: [String], clients: ClientRegistry) {
        isFirstParty = clientID == AccessTokens.apiClientID || clients.client(clientID)?.isFirstParty == true
        self.scopes = Set(scopes)
    }

    /// `/oauth/userinfo` is the OpenID Connect endpoint: it needs `openid` (OpenID Connect Core §5.3).
    var mayReadUserinfo: Bool { scopes.contains("openid") }

    /// The member's email address and its flags in `/api/me`.
    var mayReadEmail: Bool { isFirstParty || scopes.contains("email") }

    /// The member's name in `/api/me`.
    var mayReadName: Bool { isFirstParty || Scopes.grantsName(scopes) }

    /// `DELETE /api/me`.
    var mayDeleteAccount: Bool { isFirstParty }
}
