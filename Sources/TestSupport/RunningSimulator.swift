import AppleIDSimulator
import Foundation
import HTTPServer
import JOSE
import JSON
import Synchronization
import Testing
import TestSupport

/// A simulator behind a real HTTP listener on a free loopback port, stopped when released.
final class RunningSimulator: Sendable {
    static let clientID = "com.example.web"
    static let redirectURI = "http://127.0.0.1:9/apple_redirect"
    static let standardAuthorizeParameters: [(String, String)] = [
        ("client_id", clientID), ("redirect_uri", redirectURI), ("response_type", "code id_token"),
        ("scope", "name email"), ("response_mode", "form_post"), ("state", "state-123"), ("nonce", "nonce-456"),
    ]

    let simulator: AppleIDStandIn
    let server: MicroHTTPDListener
    var port: Int { server.port }

    init(clock: TestClock? = nil, callbackDestinations: [String: [String]] = [:], returnURLs: ReturnURLs = .loopback) throws {
        if let clock {
            simulator = try AppleIDStandIn(callbackDestinations: callbackDestinations, returnURLs: returnURLs, clock: { clock.now })
        } else {
            simulator = try AppleIDStandIn(callbackDestinations: callbackDestinations, returnURLs: returnURLs)
        }
        server = MicroHTTPDListener(configuration: ServerConfiguration(host: "127.0.0.1", port: 0), responder: simulator,
                            logger: .silent)
        try server.start()
    }

    deinit { server.shutdown(quiescing: false) }

    func get(_ path: String) throws -> RawHTTPResponse {
        try RawHTTPClient.request(port: port, path: path)
    }

    func post(_ path: String, form: [(String, String)]) throws -> RawHTTPResponse {
        try RawHTTPClient.request(port: port, method: "POST", path: path,
                                  headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                  body: FormFields(form).urlEncoded)
    }

    static func authorizePath(_ parameters: [(String, String)] = standardAuthorizeParameters) -> String {
        "/auth/authorize?" + FormFields(parameters).urlEncoded
    }

    /// Opens the authorize page, then submits its form as a person would: picking `user`, an email choice, a button.
    func signIn(_ parameters: [(String, String)] = standardAuthorizeParameters, user: SimulatedUser = .ada,
                hideEmail: Bool = false, action: String = "continue") throws -> RawHTTPResponse {
        let page = try get(Self.authorizePath(parameters))
        try #require(page.status == 200, "authorize page: \(page.status) \(page.text)")
        let form = HTMLForm(page.text)
        try #require(form.action == "/auth/authorize")
        let choices = [("user", user.sub), ("email_choice", hideEmail ? "hide" : "share"), ("action", action)]
        return try post("/auth/authorize", form: form.hiddenFields + choices)
    }

    /// A sign-in that must end in a form_post back to the app; returns the posted fields.
    func signInFields(_ parameters: [(String, String)] = standardAuthorizeParameters, user: SimulatedUser = .ada,
                      hideEmail: Bool = false, action: String = "continue") throws -> [String: String] {
        let response = try signIn(parameters, user: user, hideEmail: hideEmail, action: action)
        try #require(response.status == 200, "consent post: \(response.status) \(response.text)")
        let form = HTMLForm(response.text)
        try #require(form.action == Self.redirectURI)
        return form.fieldsByName
    }

    /// Verifies `token` against the JWKS the simulator serves over HTTP, as a relying party would.
    func verifiedClaims(_ token: String) throws -> [String: JSONValue] {
        let jws = try CompactJWS(parsing: token)
        try jws.requireAlgorithm(in: [.RS256])
        let keys = try JSONValue.parse(get("/auth/keys").body)["keys"]?.arrayValue ?? []
        let jwk = try #require(keys.first { $0["kid"]?.stringValue == jws.keyID }, "kid not in the JWKS")
        let publicKey = try RSAPublicKey(jwk: jwk)
        try #require(publicKey.verifyRS256(signature: jws.signature, message: jws.signingInput), "signature does not verify")
        return try jws.claims()
    }
}

/// A settable clock for expiry tests.
final class TestClock: Sendable {
    private let current = Mutex(Date())
    var now: Date { current.withLock { $0 } }
    func advance(by seconds: TimeInterval) { current.withLock { $0 += seconds } }
}
