import AppleID
import BridgeMetrics
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

/// `POST /oauth/token`: the authorization-code grant (single use, bound to client, redirect URI and PKCE verifier;
/// a second redemption by the same client revokes what the first issued; another client's presentation is refused
/// and changes nothing) and the refresh-token grant (rotation with the JSON API's reuse detection; a narrower
/// `scope` narrows what it issues, a wider one is `invalid_scope`). Answers carry an RFC 9068 access token, a refresh token and an ID token.
package struct ProviderTokenEndpoint: Sendable {
    package static let idTokenLifetime: TimeInterval = 3600

    /// What it reads and writes of the store.
    package typealias StoreRole = any MemberTransaction & OpenIDProviderTransaction & SessionTransaction
    package let store: StoreAccess<StoreRole>
    package let clock: WallClock
    package let clientAuthentication: ProviderClientAuthentication
    package let accessTokens: AccessTokens
    package let idTokens: ProviderTokens
    package let keys: ProviderKeyRing
    package let sessionIssuer: SessionIssuer
    /// Shared with /login and the JSON API's sign-in endpoints: a grant writes rows too.
    package let metrics: Metrics
    package let logger: Logger

    package init(store: StoreAccess<StoreRole>, clock: WallClock, clientAuthentication: ProviderClientAuthentication,
                 accessTokens: AccessTokens, idTokens: ProviderTokens, keys: ProviderKeyRing,
                 sessionIssuer: SessionIssuer, metrics: Metrics, logger: Logger) {
        self.store = store
        self.clock = clock
        self.clientAuthentication = clientAuthentication
        self.accessTokens = accessTokens
        self.idTokens = idTokens
        self.keys = keys
        self.sessionIssuer = sessionIssuer
        self.metrics = metrics
        self.logger = logger
    }

    /// What a grant issues: minted into tokens after the transaction committed.
    package struct Grant {
        package var user: User
        package var sessionIDHash: String
        package var refreshToken: String
        package var scopes: [String]
        package var nonce: String?
        package var authTime: Date

        package init(user: User, sessionIDHash: String, refreshToken: String, scopes: [String], nonce: String? = nil,
                     authTime: Date) {
            self.user = user
            self.sessionIDHash = sessionIDHash
            self.refreshToken = refreshToken
            self.scopes = scopes
            self.nonce = nonce
            self.authTime = authTime
        }
    }

    /// The parameters of both grants and of client authentication: RFC 6749 §3.1 forbids repeating them, and asks
    /// that any other be ignored.
    package static let parameters: Set<String> = ["grant_type", "code", "redirect_uri", "client_id", "client_secret",
                                          "code_verifier", "refresh_token", "scope"]

    /// Registered rate limited (`OpenIDProviderGroup.register`): the rate limit, then the grant, two transactions,
    /// and the listener thread serves other connections while each waits for its group commit.
    package func token(_ request: Request) throws -> Reply {
        guard let form = request.formBody else { throw OAuthRefusal.invalidRequest("the body must be a form") }
        if let repeated = form.repeatedNames.intersection(Self.parameters).sorted().first {
            throw OAuthRefusal.invalidRequest("the parameter \(repeated) is repeated")  // RFC 6749 §3.1
        }
        let client = try clientAuthentication.authenticate(request, form)
        let transaction: GrantTransaction
        switch form["grant_type"] {
        case "authorization_code": transaction = try redeemCode(form, client: client)
        case "refresh_token": transaction = try refresh(form, client: client)
        case nil: throw OAuthRefusal.invalidRequest("grant_type is missing")
        default: throw OAuthRefusal(status: 400, error: "unsupported_grant_type", description: "grant_type must be authorization_code or refresh_token")
        }
        return request.answer(afterWriting: transaction, to: store) { [self] outcome in
            // Counted here, after the commit: a write closure may run twice (see `Store.write`).
            if case let .failure(refusal) = outcome, let replay = refusal.replay {
                switch replay {
                case let .code(clientID):
                    metrics.increment("bridge_oidc_code_replays_total")
                    logger.warning("oidc_code_replayed", ["client_id": clientID])
                case .refreshToken:
                    sessionIssuer.recordReuse(flow: SignInFlow.providerSession)
                }
            }
            let grant = try outcome.get()
            metrics.increment("bridge_oidc_tokens_issued_total", ["grant_type": form["grant_type"] ?? ""])
            return try tokenResponse(grant, client: client)
        }
    }

    /// The one transaction that turns a code or a refresh token into a grant, or says why not.
    private typealias GrantTransaction = @Sendable (StoreRole) throws -> Result<Grant, OAuthRefusal>

    private func redeemCode(_ form: FormFields, client: OpenIDClient) throws -> GrantTransaction {
        guard let code = form["code"], !code.isEmpty else { throw OAuthRefusal.invalidRequest("code is missing") }
        guard let redirectURI = form["redirect_uri"] else { throw OAuthRefusal.invalidRequest("redirect_uri is missing") }
        let now = clock.now
        let codeHash = SecretTokens.digest(code)
        let verifier = form["code_verifier"]
        let newSession = SessionIssuer.newSession(withRefreshToken: true)  // made once: the write may run twice
        return { [self] transaction in
            switch try transaction.redeemAuthorizationCode(codeHash: codeHash, now: now) {
            case .unknown, .expired:
                return .failure(.invalidGrant("the code is unknown or has expired"))
            case let .replayed(record):
                // Anyone may present a code they saw; only the client it was issued to (authenticated above) may
                // set off the revocation of what it gave that client.
                guard record.clientID.hasSameUTF8(as: client.clientID) else {
                    return .failure(.invalidGrant("the code was issued to another client"))
                }
                // A code presented twice was intercepted, or the client is broken: what it issued goes too.
                var refusal = OAuthRefusal.invalidGrant("the code was already presented and refused; it gave no tokens")
                if let family = record.familyID {
                    try transaction.revokeRefreshFamily(family, becauseReused: false)
                    refusal = .invalidGrant("the code was already used; the tokens it gave are revoked")
                }
                refusal.replay = .code(clientID: record.clientID)
                return .failure(refusal)
            case let .redeemed(record):
                // Thrown, so that the write is undone: another client's presentation does not spend the code.
                guard record.clientID.hasSameUTF8(as: client.clientID) else {
                    throw OAuthRefusal.invalidGrant("the code was issued to another client")
                }
                if let refusal = Self.check(record, client: client, redirectURI: redirectURI, verifier: verifier) {
                    return .failure(refusal)
                }
                guard let user = try transaction.user(id: record.userID) else { return .failure(.invalidGrant("the account is gone")) }
                let grant = try openGrant(newSession, user: user, client: client, scope: record.scope, authTime: record.authTime,
                                          nonce: record.nonce, in: transaction, now: now)
                try transaction.setAuthorizationCodeFamily(codeHash: codeHash, familyID: grant.familyID)
                return .success(grant.grant)
            }
        }
    }

    /// The bindings a redeemed code must meet; nil when it meets them all.
    package static func check(_ record: AuthorizationCodeRecord, client: OpenIDClient, redirectURI: String,
                              verifier: String?) -> OAuthRefusal? {
        guard record.clientID.hasSameUTF8(as: client.clientID) else { return .invalidGrant("the code was issued to another client") }
        guard record.redirectURI.hasSameUTF8(as: redirectURI) else { return .invalidGrant("redirect_uri differs from the authorization request") }
        switch (record.codeChallenge, verifier) {
        case (nil, nil): return nil
        case (nil, _?): return .invalidGrant("no code_challenge was sent, so no code_verifier is expected")
        case (_?, nil): return .invalidGrant("code_verifier is missing")
        case let (challenge?, verifier?): return PKCE.verify(verifier, against: challenge) ? nil : .invalidGrant("code_verifier does not match")
        }
    }

    /// A session for the client, and the first refresh token of a new family recorded as this client's.
    private func openGrant(_ new: SessionIssuer.NewSession, user: User, client: OpenIDClient, scope: String,
                           authTime: Date, nonce: String?, in transaction: StoreRole,
                           now: Date) throws -> (grant: Grant, familyID: String) {
        let opened = try sessionIssuer.open(new, userID: user.id, flow: SignInFlow.providerSession,
                                            nonceVerified: true, in: transaction, now: now)
        guard let (refreshToken, familyID) = opened.refresh else {
            preconditionFailure("a client's session is opened with a refresh token")
        }
        try transaction.insertProviderGrant(ProviderGrant(familyID: familyID, clientID: client.clientID, userID: user.id,
                                                          scope: scope, authTime: authTime, createdAt: now))
        let scopes = scope.split(separator: " ").map(String.init)
        return (Grant(user: user, sessionIDHash: opened.sessionIDHash, refreshToken: refreshToken, scopes: scopes,
                      nonce: nonce, authTime: authTime), familyID)
    }

    private func refresh(_ form: FormFields, client: OpenIDClient) throws -> GrantTransaction {
        guard let presented = form["refresh_token"], !presented.isEmpty else {
            throw OAuthRefusal.invalidRequest("refresh_token is missing")
        }
        let requested = form["scope"].flatMap { $0.isEmpty ? nil : $0.split(separator: " ").map(String.init) }
        let presentation = SessionIssuer.presentation(of: presented, by: .client(id: client.clientID), now: clock.now)
        return { [sessionIssuer] transaction in
            let anotherClients = OAuthRefusal.invalidGrant("the refresh token is unknown or was issued to another client")
            switch try sessionIssuer.rotate(presentation, in: transaction, refusingAnotherHoldersWith: anotherClients) {
            case let .rotated(user, sessionIDHash, refreshToken, grant?):
                let scopes = try Self.scopes(requested, granted: grant.scope.split(separator: " ").map(String.init))
                return .success(Grant(user: user, sessionIDHash: sessionIDHash, refreshToken: refreshToken,
                                      scopes: scopes, nonce: nil, authTime: grant.authTime))
            case .rotated(_, _, _, nil):
                throw anotherClients  // not reached: a client's rotation always has its grant
            case .reused:
                var refusal = OAuthRefusal.invalidGrant("the refresh token was already used; its family is revoked")
                refusal.replay = .refreshToken
                return .failure(refusal)
            case .revoked:
                return .failure(.invalidGrant("the refresh token was revoked"))
            case .sessionGone:
                return .failure(.invalidGrant("the refresh token has expired"))
            case .expiredOrUnknown:
                return .failure(.invalidGrant("the refresh token is unknown or has expired"))
            }
        }
    }

    /// RFC 6749 §6: a refresh may ask for the granted scopes or fewer. More is `invalid_scope`, thrown so that the
    /// rotation is undone and the presented token stays good.
    package static func scopes(_ requested: [String]?, granted: [String]) throws -> [String] {
        guard let requested else { return granted }
        if let wider = requested.first(where: { asked in !granted.contains { $0.hasSameUTF8(as: asked) } }) {
            throw OAuthRefusal.invalidScope("the scope \(wider.prefix(100)) was not granted; a refresh cannot widen the scope")
        }
        return granted.filter { scope in requested.contains { $0.hasSameUTF8(as: scope) } }
    }

    private func tokenResponse(_ grant: Grant, client: OpenIDClient) throws -> Response {
        let now = clock.now
        let accessToken = try accessTokens.issue(userID: grant.user.id, sessionIDHash: grant.sessionIDHash,
                                                 clientID: client.clientID, scopes: grant.scopes, now: now)
        let idToken = try idTokens.idToken(
            subject: ProviderUserinfo.subject(grant.user), clientID: client.clientID, scopes: grant.scopes, nonce: grant.nonce,
            authTime: grant.authTime, accessToken: accessToken, now: now, lifetime: Self.idTokenLifetime, key: keys.signingKey)
        var response = Response.json(JSONValue.object([
            "access_token": .string(accessToken), "token_type": "Bearer", "expires_in": .number(accessTokens.lifetime),
            "refresh_token": .string(grant.refreshToken), "id_token": .string(idToken),
            "scope": .string(grant.scopes.joined(separator: " ")),
        ]).serialized())
        response.headers.set("Cache-Control", "no-store")
        response.headers.set("Pragma", "no-cache")
        return response
    }
}
