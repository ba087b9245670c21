import AppleID
import Foundation
import HTTPServer
import JOSE
import Mustache
import Storage

/// The application: routes, the web sign-in, sessions and pages, independent of sockets.
public final class BridgeApp: Sendable {
    public let configuration: BridgeConfiguration
    public let store: any Store
    public let keys: JWKSCache
    public let verifier: IdentityTokenVerifier
    public let metrics = Metrics()
    let pages: Pages
    let staticFiles: StaticFiles
    let clock: WallClock
    let logger: Logger
    let secretKey: [UInt8]
    let accessTokens: AccessTokens
    /// Per client: GET /login and the API's auth endpoints each write a row, so they are what a flood would use.
    let signInRateLimiter: RateLimiter
    let vault: AppleTokenVault
    /// Nil unless APPLE_TEAM_ID, APPLE_KEY_ID and APPLE_PRIVATE_KEY_PATH are set.
    public let clientSecrets: ClientSecretProvider?
    let appleTokens: AppleTokenClient?
    let notifications: NotificationVerifier

    public static let loginAttemptLifetime: TimeInterval = 600
    public static let sessionLifetime: TimeInterval = 7 * 86_400

    public init(configuration: BridgeConfiguration, store: any Store, resourcesDirectory: String,
                transport: any AppleHTTPTransport = URLSessionTransport(), clock: WallClock = .system,
                logger: Logger = Logger(), signInRequestsPerMinute: Int = 600) throws {
        guard let secretKey = configuration.secretKey else {
            throw ConfigurationError("BRIDGE_SECRET_KEY", "is missing")
        }
        self.configuration = configuration
        self.store = store
        self.clock = clock
        self.logger = logger
        self.secretKey = secretKey
        accessTokens = try AccessTokens(secretKey: secretKey, issuer: configuration.publicURL, lifetime: Self.accessTokenLifetime)
        signInRateLimiter = RateLimiter(perMinute: signInRequestsPerMinute, burst: max(10, signInRequestsPerMinute / 6))
        pages = try Pages(directory: resourcesDirectory + "/Templates", devMode: configuration.mode == .development)
        staticFiles = try StaticFiles(directory: resourcesDirectory + "/Public")
        keys = JWKSCache(url: configuration.appleIDURL + "/auth/keys", transport: transport, clock: clock) { event, detail in
            logger.info(event, ["detail": detail])
        }
        verifier = IdentityTokenVerifier(
            policy: VerificationPolicy(issuers: configuration.issuers, servicesID: configuration.servicesID,
                                       bundleIDs: configuration.bundleIDs),
            keys: keys, clock: clock)
        vault = AppleTokenVault(secretKey: secretKey)
        notifications = NotificationVerifier(keys: keys, issuers: configuration.issuers,
                                             clientIDs: configuration.clientIDs, clock: clock)
        if let teamID = configuration.teamID, let keyID = configuration.keyID, let path = configuration.privateKeyPath {
            let key: AppleClientKey
            do {
                key = try AppleClientKey.load(teamID: teamID, keyID: keyID, path: path)
            } catch {
                throw ConfigurationError("APPLE_PRIVATE_KEY_PATH", error.description)
            }
            let secrets = ClientSecretProvider(key: key, clock: clock)
            clientSecrets = secrets
            // Two attempts: a sign-in waits on this, so a down Apple should cost seconds, not most of a minute.
            appleTokens = AppleTokenClient(baseURL: configuration.appleIDURL, transport: transport, secrets: secrets,
                                           verifier: verifier, attempts: 2)
        } else {
            clientSecrets = nil
            appleTokens = nil
        }
    }

    public func makeResponder() -> some HTTPResponder {
        var router = Router()
        router.add("GET", "/") { _ in .redirect(to: "/login") }
        router.add("GET", "/login") { [self] in try loginPage($0) }
        router.add("POST", "/apple_redirect") { [self] in try appleRedirect($0) }
        router.add("GET", "/session") { [self] in try sessionPage($0) }
        router.add("POST", "/logout") { [self] in try logout($0) }
        router.add("POST", "/api/auth/nonce") { [self] in try apiNonce($0) }
        router.add("POST", "/api/auth/apple") { [self] in try apiSignIn($0) }
        router.add("POST", "/api/auth/refresh") { [self] in try apiRefresh($0) }
        router.add("POST", "/api/auth/logout") { [self] in try apiLogout($0) }
        router.add("GET", "/api/me") { [self] in try apiMe($0) }
        router.add("DELETE", "/api/me") { [self] in try apiDeleteMe($0) }
        router.add("POST", "/account/delete") { [self] in try accountDelete($0) }
        router.add("POST", "/apple/notifications") { [self] in try appleNotification($0) }
        router.add("GET", "/healthz") { _ in .json("{\"status\":\"ok\"}") }
        router.add("GET", "/metrics") { [self] _ in
            var response = Response.text(metrics.prometheusText(extra: [("bridge_jwks_fetches_total", keys.fetches)]))
            response.headers.set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            return response
        }
        router.addPrefix("GET", "/public/") { [staticFiles] in try staticFiles.respond(to: $0) }
        return SecurityHeaders(ErrorPages(router, pages: pages, logger: logger), contentSecurityPolicy: contentSecurityPolicy,
                               sessionCookieNames: [CookieNames.session])
    }

    /// The listener's own refusals (413), shaped like every other error and with the same security headers.
    public var refusalResponse: HTTPServer.Refusal {
        let shaped = ErrorPages<Router>.refusal(pages: pages)
        let policy = contentSecurityPolicy
        return { path, status, message in
            var response = shaped(path, status, message)
            if response.isHTML {
                SecurityHeaders<Router>.addBrowserHeaders(to: &response.headers, contentSecurityPolicy: policy)
            }
            return response
        }
    }

    var contentSecurityPolicy: String {
        let script = configuration.useJSSDK ? "'self' https://appleid.cdn-apple.com" : "'self'"
        return "default-src 'none'; script-src \(script); style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    }

    // MARK: - Sessions

    /// The session of this request, if its cookie names a live one.
    func currentSession(_ request: Request) throws -> (session: Session, user: User)? {
        guard let id = request.cookies[CookieNames.session], !id.isEmpty else { return nil }
        let now = clock.now
        return try store.read { try $0.session(idHash: Tokens.digest(id), now: now) }
    }

    /// A CSRF token tied to the session, derived rather than stored.
    func csrfToken(for session: Session) -> String {
        Base64URL.encode(HMACSHA256.authenticate(key: secretKey, message: Array("csrf:\(session.idHash)".utf8)))
    }

    func sessionCookie(_ id: String) -> Cookie {
        Cookie(name: CookieNames.session, value: id, path: "/", maxAge: Int(Self.sessionLifetime), sameSite: .lax)
    }

    func sessionPage(_ request: Request) throws -> Response {
        guard let (session, user) = try currentSession(request) else { return .redirect(to: "/login") }
        var userContext: [String: MustacheValue] = [
            "sub": .string(user.providerUserID), "emailVerified": .bool(user.emailVerified),
            "isPrivateEmail": .bool(user.isPrivateEmail),
        ]
        if let email = user.email { userContext["email"] = .string(email) }
        if let name = user.displayName, !name.isEmpty { userContext["displayName"] = .string(name) }
        let flow = SignInFlow(rawValue: session.flow) ?? .web
        return pages.render("session", [
            "title": "Signed in", "user": .object(userContext), "flow": .string(flow.rawValue),
            "flowLabel": .string(flow.label), "nonceVerified": .bool(session.nonceVerified),
            "signedInAt": .string(Self.displayTime(session.createdAt)), "csrfToken": .string(csrfToken(for: session)),
        ])
    }

    func logout(_ request: Request) throws -> Response {
        var response = Response.redirect(to: "/login")
        guard let (session, _) = try currentSession(request) else {
            // Only forget a cookie the browser actually sent (a stale one); a cross-site form sends none.
            if request.cookies[CookieNames.session] != nil { response.setCookie(.expired(CookieNames.session)) }
            return response
        }
        guard let presented = request.formBody?["csrf"], ConstantTime.equals(presented, csrfToken(for: session)) else {
            return pages.error(status: 403, heading: "Sign-out refused",
                               message: "This sign-out request did not come from this site. Use the Sign out button on your session page.",
                               retryURL: "/session")
        }
        _ = try store.write { try $0.deleteSession(idHash: session.idHash) }
        logger.info("signed_out", ["user_id": String(session.userID)])
        response.setCookie(.expired(CookieNames.session))
        return response
    }

    static func displayTime(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date).replacingOccurrences(of: "T", with: " ").replacingOccurrences(of: "Z", with: " UTC")
    }
}

/// Every error a person or an app can see: JSON under `/api/`, the HTML error page elsewhere.
struct ErrorPages<Next: HTTPResponder>: HTTPResponder {
    let next: Next
    let pages: Pages
    let logger: Logger

    init(_ next: Next, pages: Pages, logger: Logger) {
        self.next = next
        self.pages = pages
        self.logger = logger
    }

    func respond(to request: Request) throws -> Response {
        do {
            if Self.wantsJSON(request.path) { return try JSONErrors(next: next).respond(to: request) }
            return try next.respond(to: request)
        } catch let error as HTTPError {
            return page(status: error.status, message: error.message, request: request, headers: error.headers)
        } catch let error as APIError {
            return page(status: error.status, message: error.message, request: request, headers: error.headers)
        } catch {
            // A bug or a database failure: say so plainly, log only the error's type (never request data).
            logger.error("unhandled_error", ["path": request.path, "error": String(describing: type(of: error))])
            let message = "The server could not answer this request. Please try again."
            if Self.wantsJSON(request.path) { return APIError(500, "internal_error", message).response }
            return page(status: 500, message: message, request: request, headers: HTTPHeaders())
        }
    }

    /// The JSON API and Apple's server-to-server endpoint answer in JSON; everything else is for people.
    static func wantsJSON(_ path: String) -> Bool { path.hasPrefix("/api/") || path.hasPrefix("/apple/") }

    func page(status: Int, message: String, request: Request, headers: HTTPHeaders) -> Response {
        if request.path.hasPrefix("/public/") || request.path == "/healthz" || request.path == "/metrics" {
            return .text(message + "\n", status: status)
        }
        var response = pages.error(status: status, heading: status == 404 ? "Page not found" : HTTPError.reasonPhrase(status),
                                   message: message, retryURL: nil)
        for field in headers { response.headers.set(field.name, field.value) }
        return response
    }

    /// What the HTTP layer answers itself (e.g. 413 before the body is read), shaped the same way.
    static func refusal(pages: Pages) -> @Sendable (String, Int, String) -> Response {
        { path, status, message in
            if wantsJSON(path) {
                return APIError(status, JSONErrors<Router>.code(for: status), message).response
            }
            return pages.error(status: status, heading: HTTPError.reasonPhrase(status), message: message, retryURL: nil)
        }
    }
}
