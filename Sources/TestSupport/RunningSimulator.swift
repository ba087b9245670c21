import AppleIDSimulator
import Foundation
import HTTPServer
import JOSE
import JSON

/// The Apple ID simulator behind a real HTTP listener on loopback, stopped when released: what the tests sign in
/// through, alone (the simulator's own tests) or behind the bridge (`BridgeHarness`, the executable's tests).
public final class RunningSimulator: Sendable {
    public static let clientID = "com.example.web"
    public static let redirectURI = "http://127.0.0.1:9/apple_redirect"
    public static let standardAuthorizeParameters: [(String, String)] = [
        ("client_id", clientID), ("redirect_uri", redirectURI), ("response_type", "code id_token"),
        ("scope", "name email"), ("response_mode", "form_post"), ("state", "state-123"), ("nonce", "nonce-456"),
    ]

    public let simulator: AppleIDStandIn
    public let server: MicroHTTPDListener
    /// The port held for a simulator created not listening; nil when the kernel picked it at start.
    private let reservedPort: Int?
    public var port: Int { reservedPort ?? server.port }
    public var url: String { "http://127.0.0.1:\(port)" }

    /// `clock`: the simulator's now (real time without one). `listening: false` reserves a free port and leaves it
    /// closed until `start()`, for tests of an Apple that is down at first and then comes back.
    public init(clock: TestClock? = nil, callbackDestinations: [String: [String]] = [:],
                returnURLs: ReturnURLs = .loopback, listening: Bool = true) throws {
        if let clock {
            simulator = try AppleIDStandIn(callbackDestinations: callbackDestinations, returnURLs: returnURLs, clock: { clock.now })
        } else {
            simulator = try AppleIDStandIn(callbackDestinations: callbackDestinations, returnURLs: returnURLs)
        }
        reservedPort = listening ? nil : freeLoopbackPort()
        server = MicroHTTPDListener(configuration: ServerConfiguration(host: "127.0.0.1", port: reservedPort ?? 0),
                                    responder: simulator, logger: .silent)
        if listening { try server.start() }
    }

    /// Starts listening on the reserved port (a simulator created with `listening: false`).
    public func start() throws { try server.start() }

    // Not quiescing: see MicroHTTPDListener.shutdown(quiescing:).
    deinit { server.shutdown(quiescing: false) }

    public func get(_ path: String) throws -> RawHTTPResponse {
        try RawHTTPClient.request(port: port, path: path)
    }

    public func post(_ path: String, form: [(String, String)]) throws -> RawHTTPResponse {
        try RawHTTPClient.request(port: port, method: "POST", path: path,
                                  headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                  body: FormFields(form).urlEncoded)
    }

    public static func authorizePath(_ parameters: [(String, String)] = standardAuthorizeParameters) -> String {
        "/auth/authorize?" + FormFields(parameters).urlEncoded
    }

    /// Opens the authorize page, then submits its form as a person would: picking `user`, an email choice, a button.
    public func signIn(_ parameters: [(String, String)] = standardAuthorizeParameters, user: SimulatedUser = .ada,
                       hideEmail: Bool = false, action: String = "continue") throws -> RawHTTPResponse {
        let page = try get(Self.authorizePath(parameters))
        guard page.status == 200 else { throw TestFailure("authorize page: \(page.status) \(page.text)") }
        let form = HTMLForm(page.text)
        guard form.action == "/auth/authorize" else { throw TestFailure("authorize page's form posts to \(form.action ?? "nowhere")") }
        let choices = [("user", user.sub), ("email_choice", hideEmail ? "hide" : "share"), ("action", action)]
        return try post("/auth/authorize", form: form.hiddenFields + choices)
    }

    /// A sign-in that must end in a form_post back to the app; returns the posted fields.
    public func signInFields(_ parameters: [(String, String)] = standardAuthorizeParameters, user: SimulatedUser = .ada,
                             hideEmail: Bool = false, action: String = "continue") throws -> [String: String] {
        let response = try signIn(parameters, user: user, hideEmail: hideEmail, action: action)
        guard response.status == 200 else { throw TestFailure("consent post: \(response.status) \(response.text)") }
        let form = HTMLForm(response.text)
        guard form.action == Self.redirectURI else { throw TestFailure("form_post to \(form.action ?? "nowhere"), not \(Self.redirectURI)") }
        return form.fieldsByName
    }

    /// Verifies `token` against the JWKS the simulator serves over HTTP, as a relying party would.
    public func verifiedClaims(_ token: String) throws -> [String: JSONValue] {
        let jws = try CompactJWS(parsing: token)
        try jws.requireAlgorithm(in: [.RS256])
        let keys = try JSONValue.parse(get("/auth/keys").body)["keys"]?.arrayValue ?? []
        guard let jwk = keys.first(where: { $0["kid"]?.stringValue == jws.keyID }) else { throw TestFailure("kid not in the JWKS") }
        let publicKey = try RSAPublicKey(jwk: jwk)
        guard publicKey.verifyRS256(signature: jws.signature, message: jws.signingInput) else {
            throw TestFailure("signature does not verify")
        }
        return try jws.claims()
    }
}
