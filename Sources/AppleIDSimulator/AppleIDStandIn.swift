import Logging
import Foundation
import HTTPServer
import JOSE
import JSON
import Locking

/// A local stand-in for https://appleid.apple.com: authorize page, JWKS, token, revoke and user migration
/// endpoints, signing identity tokens with its own RSA keys. For development and tests only.
public final class AppleIDStandIn: HTTPResponder, Sendable {
    public let issuer: String
    public let users: [SimulatedUser]
    /// By redirect URI: where the relying party's answer to the simulator's form post may send the browser on, as
    /// Content-Security-Policy sources (`https://app.example.com`, `com.example.app:`). Chromium checks the posting
    /// page's `form-action` against those redirects too, so the auto-post page names them beside the redirect URI's
    /// origin; a relying party that redirects only to itself needs no entry.
    public let callbackDestinations: [String: [String]]
    /// Where a sign-in may be sent (`ReturnURLs`).
    public let returnURLs: ReturnURLs
    let logger: Logger
    let clock: @Sendable () -> Date
    let state: Lock<SimulatorState>

    struct SimulatorState: Sendable {
        var keys: SigningKeyRing
        var grants = GrantStore()
        var clientSecrets = ClientSecretVerifier()
        var isUnavailable = false
        var jwksFetchCount = 0
        var jwksCacheMaxAge = 86_400
        /// The team the app was transferred to (`transferApp(toTeam:)`); nil while it is with the first team.
        var appOwnerTeam: String?
        /// `client_credentials` access tokens for the user migration endpoint.
        var migrationGrants: [String: MigrationGrant] = [:]
        var userMigrationCallCount = 0
    }

    /// - Parameter clock: the simulator's notion of now (code expiry, token times, client secret checks).
    public init(issuer: String = "https://appleid.apple.com", users: [SimulatedUser] = SimulatedUser.defaults,
                callbackDestinations: [String: [String]] = [:], returnURLs: ReturnURLs = .loopback, logger: Logger = .silent,
                clock: @escaping @Sendable () -> Date = { Date() }) throws {
        precondition(!users.isEmpty, "the simulator needs at least one user")
        self.issuer = issuer
        self.users = users
        self.callbackDestinations = callbackDestinations
        self.returnURLs = returnURLs
        self.logger = logger
        self.clock = clock
        self.state = Lock(SimulatorState(keys: SigningKeyRing(current: try SigningKey.generate())))
    }

    public func respond(to request: Request) -> Reply { Reply(catching: { try answer(request) }) }

    func answer(_ request: Request) throws -> Response {
        let method = request.method == "HEAD" ? "GET" : request.method
        let unavailable = state.withLock { state in
            if method == "GET" && request.path == "/auth/keys" { state.jwksFetchCount += 1 }
            return state.isUnavailable
        }
        if unavailable { return Response.text("The simulated Apple ID service is unavailable.\n", status: 503) }

        switch (method, request.path) {
        case ("GET", "/"): return HTML.response(InformationPages.home(issuer: issuer))
        case ("GET", "/auth/authorize"): return showAuthorizePage(request)
        case ("POST", "/auth/authorize"): return try completeAuthorization(request)
        case ("GET", SimulatorAssets.scriptPath): return SimulatorAssets.scriptResponse
        case ("GET", SimulatorAssets.stylesheetPath): return SimulatorAssets.stylesheetResponse
        case ("GET", let path) where AppleJSSDKStandIn.serves(path): return AppleJSSDKStandIn.response
        case ("GET", "/auth/keys"): return serveKeys()
        case ("POST", "/auth/token"): return try exchangeToken(request)
        case ("POST", "/auth/revoke"): return revokeToken(request)
        case ("POST", "/auth/usermigrationinfo"): return userMigrationInfo(request)
        case ("POST", "/__simulator/rotate-keys"):
            try rotateKeys()
            return Response.json(JSONValue.object(["kid": .string(currentKeyID)]).serialized())
        case ("POST", "/__simulator/notifications"): return try mintedNotification(request)
        case ("POST", "/__simulator/reset-first-sign-ins"):
            resetFirstSignIns()
            return Response.json(#"{"reset":true}"#)
        default:
            throw HTTPError(404, "The simulated Apple ID has no endpoint \(request.method) \(request.path).")
        }
    }

    // MARK: Controls for tests and development

    /// Starts signing with a new RSA-2048 key; the JWKS keeps publishing the previous key as well.
    public func rotateKeys() throws {
        let key = try SigningKey.generate()
        state.withLock { $0.keys.rotate(to: key) }
        logger.info("simulator_keys_rotated", ["kid": key.keyID])
    }

    /// Stops publishing every key but the current one.
    public func retireOldKeys() {
        state.withLock { $0.keys.retirePrevious() }
    }

    public var currentKeyID: String { state.withLock { $0.keys.current.keyID } }

    /// The JWKS as `/auth/keys` serves it.
    public var jwks: JSONValue { state.withLock { $0.keys.jwks } }

    /// Every `GET /auth/keys` that reached the simulator, including those answered 503 while unavailable.
    public var jwksFetchCount: Int { state.withLock { $0.jwksFetchCount } }

    /// The `max-age` of the JWKS `Cache-Control` header.
    public var jwksCacheMaxAge: Int {
        get { state.withLock { $0.jwksCacheMaxAge } }
        set { state.withLock { $0.jwksCacheMaxAge = newValue } }
    }

    /// When true every endpoint answers 503, as if Apple were down.
    public var isUnavailable: Bool {
        get { state.withLock { $0.isUnavailable } }
        set { state.withLock { $0.isUnavailable = newValue } }
    }

    /// Every token sent to `/auth/revoke`, known or not, in order.
    public var revokedTokens: [String] { state.withLock { $0.grants.revokedTokens } }

    /// Registers a developer key; from then on `client_secret` must be an ES256 JWT signed by a registered key.
    public func registerClientKey(teamID: String, keyID: String, publicKey: ECPublicKey) {
        state.withLock { $0.clientSecrets.register(RegisteredClientKey(teamID: teamID, keyID: keyID, publicKey: publicKey)) }
    }

    // MARK: Minting for tests

    /// Signs `claims` with the current key. Header overrides replace `alg`, `kid` or add fields;
    /// a `.null` override removes that header field.
    public func mintIdentityToken(_ claims: IdentityTokenClaims, headerOverrides: [String: JSONValue] = [:]) throws -> String {
        let key = state.withLock { $0.keys.current }
        var header: [String: JSONValue] = ["alg": "RS256", "kid": .string(key.keyID)]
        for (name, value) in headerOverrides { header[name] = value == .null ? nil : value }
        // Assembled here rather than by JWSSigner, which would reset an overridden `alg`.
        let signingInput = Base64URL.encode(JSONValue.object(header).serializedBytes()) + "."
            + Base64URL.encode(JSONValue.object(claims.payload).serializedBytes())
        return signingInput + "." + Base64URL.encode(try key.privateKey.signRS256(Array(signingInput.utf8)))
    }

    /// An authorization code as the native Sign in with Apple sheet hands to an app: bound to the client
    /// (a bundle ID) and the user, exchanged at `/auth/token` without a redirect URI.
    public func issueAuthorizationCode(clientID: String, user: SimulatedUser, nonce: String? = nil,
                                       hideEmail: Bool = false) -> String {
        let consent = Consent(clientID: clientID, user: user,
                              sharedEmail: hideEmail ? user.privateRelayEmail : user.email,
                              isPrivateEmail: hideEmail, authTime: clock())
        return issueCode(for: consent, redirectURI: nil, nonce: nonce).code
    }

    /// Stores a new code and records the authorization; `isFirstAuthorization` is true only the first
    /// time this user authorizes this client.
    func issueCode(for consent: Consent, redirectURI: String?, nonce: String?) -> (code: String, isFirstAuthorization: Bool) {
        let code = OpaqueToken.make(.authorizationCode)
        let grant = AuthorizationCodeGrant(consent: consent, redirectURI: redirectURI, nonce: nonce,
                                           expiresAt: consent.authTime.addingTimeInterval(GrantStore.codeLifetime))
        let isFirst = state.withLock { state in
            state.grants.addCode(code, grant)
            return state.grants.recordAuthorization(consent)
        }
        return (code, isFirst)
    }
}
