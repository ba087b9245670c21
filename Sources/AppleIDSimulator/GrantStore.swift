import Foundation

/// What the person agreed to on the authorize page: who they are and which email they shared.
struct Consent: Sendable {
    let clientID: String
    let user: SimulatedUser
    /// nil when the `email` scope was not requested.
    let sharedEmail: String?
    let isPrivateEmail: Bool
    let authTime: Date
}

/// An authorization code: single use, short-lived, bound to the client, redirect URI and nonce.
struct AuthorizationCodeGrant: Sendable {
    let consent: Consent
    /// nil for codes made for native-app tests, which exchange them without a redirect URI.
    let redirectURI: String?
    let nonce: String?
    let expiresAt: Date
}

/// An access or refresh token and the consent it carries.
struct IssuedToken: Sendable {
    enum Kind: Sendable { case access, refresh }
    let kind: Kind
    let consent: Consent
}

struct ClientSubject: Hashable, Sendable {
    let clientID: String
    let sub: String
}

/// Every code and token the simulator has handed out, and which users already authorized which client.
struct GrantStore: Sendable {
    static let codeLifetime: TimeInterval = 300

    private var codes: [String: AuthorizationCodeGrant] = [:]
    /// Refresh and access tokens alike; Apple revokes a user's whole authorization through either.
    private var tokens: [String: IssuedToken] = [:]
    private var authorized: Set<ClientSubject> = []
    private(set) var revokedTokens: [String] = []

    /// Records an authorization; true when it is the first for this client and user
    /// (the only time Apple sends the `user` JSON).
    mutating func recordAuthorization(_ consent: Consent) -> Bool {
        authorized.insert(ClientSubject(clientID: consent.clientID, sub: consent.user.sub)).inserted
    }

    /// Every user's next authorization of every client counts as the first again.
    mutating func forgetAuthorizations() { authorized.removeAll() }

    mutating func addCode(_ code: String, _ grant: AuthorizationCodeGrant) { codes[code] = grant }

    /// Removes the code whatever happens next, so a code is never accepted twice, even after a failed exchange.
    mutating func redeemCode(_ code: String, now: Date) -> AuthorizationCodeGrant? {
        guard let grant = codes.removeValue(forKey: code), grant.expiresAt > now else { return nil }
        return grant
    }

    mutating func addToken(_ token: String, _ issued: IssuedToken) { tokens[token] = issued }

    func consent(forRefreshToken token: String) -> Consent? {
        guard let issued = tokens[token], issued.kind == .refresh else { return nil }
        return issued.consent
    }

    /// Revokes the whole authorization behind a known token of this client: all its tokens stop
    /// working and the next sign-in counts as a first one again. Unknown tokens change nothing.
    mutating func revoke(_ token: String, clientID: String) {
        revokedTokens.append(token)
        guard let consent = tokens[token]?.consent, consent.clientID == clientID else { return }
        let pair = ClientSubject(clientID: clientID, sub: consent.user.sub)
        tokens = tokens.filter { $0.value.consent.clientID != pair.clientID || $0.value.consent.user.sub != pair.sub }
        authorized.remove(pair)
    }
}
