import AppleID
import AppleIDSimulator
import Bridge
import BridgeSettings
import Foundation
import HTTPServer
import JOSE
import JSON
import Logging
import Storage
import TestSupport
import WebRoutes

/// The package root, found from this file, so tests use the real Templates/ and Public/.
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path

/// The real server, composed as `serve` composes it, with a fresh SQLite file, and the Apple ID simulator on loopback.
///
/// Requests made with `request` (and by `TestBrowser` and `api`) go into the composed app in process, through
/// `InProcessClient`, which applies what the listener applies before a route runs. A harness made with
/// `listening: true` also starts the listener on loopback and sends them there: for tests of the listener itself
/// (framing, timeouts, its worker pool, connection caps, what a peer's address decides) and end-to-end ones.
final class BridgeHarness: @unchecked Sendable {  // immutable after init
    static let servicesID = "com.example.web"
    static let bundleID = "com.example.app"

    /// Apple's stand-in; `appleID.start()` brings up one created with `startSimulator: false`.
    let appleID: RunningSimulator
    var simulator: AppleIDStandIn { appleID.simulator }
    let server: BridgeServer
    /// Real time plus what the test moved it by: the simulator signs with real time.
    let clock = TestClock()
    let directory: String
    let databasePath: String
    /// The port in BRIDGE_PUBLIC_URL, which the listener listens on when `listening`.
    let port: Int
    let listening: Bool
    var simulatorPort: Int { appleID.port }
    var app: ComposedService { server.app }

    /// `transport`: calls to the simulator time out after 10 s. Tests of a slow or absent Apple bring their own
    /// transport (or no simulator: refused at once). With the simulator started, the harness returns once the
    /// server holds Apple's keys: the server only starts their fetch in the background, and under the whole
    /// suite's load on two cores that first fetch sometimes took over 5 s, so a test's first sign-in, waiting for
    /// it, was answered 503 apple_keys_unavailable (several times in a day's runs, each time a different test).
    /// Tests of a cold cache start without the simulator.
    init(_ settings: [String: String] = [:], startSimulator: Bool = true, signInRequestsPerMinute: Int = 6000,
         transport: any AppleHTTPTransport = URLSessionTransport(timeout: 10), listener: ServerConfiguration? = nil,
         listening: Bool = false, logger: Logger = .silent) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("bridge-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        databasePath = directory + "/bridge.sqlite3"
        let port = freeLoopbackPort()
        self.port = port
        self.listening = listening
        // Its Return URLs are this bridge's callback and its Android relays, as in Apple's console.
        var publicURL = settings["BRIDGE_PUBLIC_URL"] ?? "http://127.0.0.1:\(port)"
        if publicURL.hasSuffix("/") { publicURL.removeLast() }
        let relays = (settings["APPLE_ANDROID_PACKAGES"] ?? "").split(separator: ",")
            .map { publicURL + "/apple/android/" + $0.trimmingCharacters(in: .whitespaces) }
        // A simulator not started yet still has its port reserved, so it can come up later ("Apple is back").
        appleID = try RunningSimulator(returnURLs: .only([publicURL + "/apple_redirect"] + relays), listening: startSimulator)
        let simulatorURL = appleID.url
        var values = [
            "BRIDGE_PORT": String(port), "BRIDGE_PUBLIC_URL": "http://127.0.0.1:\(port)",
            "BRIDGE_DATABASE": "sqlite:\(databasePath)",
            "BRIDGE_SECRET_KEY": Data(SecureRandom.bytes(32)).base64EncodedString(),
            "APPLE_SERVICES_ID": Self.servicesID, "APPLE_BUNDLE_IDS": Self.bundleID, "APPLE_ID_URL": simulatorURL,
        ]
        values.merge(settings) { _, new in new }
        let configuration = try BridgeConfiguration(values: values, mode: .development)
        server = try BridgeServer(configuration: configuration, resourcesDirectory: packageRoot,
                                  transport: transport, clock: clock.clock, logger: logger, server: listener,
                                  signInRequestsPerMinute: signInRequestsPerMinute)
        try server.start(listening: listening)
        if startSimulator { try awaitAppleKeys() }
    }

    /// Fetches Apple's keys until the server holds them (a fetch may fail under load; another is tried at once).
    func awaitAppleKeys() throws {
        let deadline = Date().addingTimeInterval(30)
        while app.keys.knownKeyIDs.isEmpty {
            if Date() > deadline { throw TestFailure("Apple's keys were not fetched") }
            if !app.keys.prefetch() { Thread.sleep(forTimeInterval: 0.02) }
        }
    }

    deinit {
        // Not quiescing: see MicroHTTPDListener.shutdown(quiescing:).
        server.shutdown(quiescing: false)
        try? FileManager.default.removeItem(atPath: directory)
    }

    func userCount() throws -> Int { try app.store.read { try $0.countUsers() } }

    /// A token signed by the simulator's current key, Apple-shaped, for the web client unless told otherwise.
    func token(audience: String = BridgeHarness.servicesID, subject: String = "001234.test.user", nonce: String?,
               code: String? = nil, adjust: (inout IdentityTokenClaims) -> Void = { _ in },
               header: [String: JSONValue] = [:]) throws -> String {
        var claims = IdentityTokenClaims(audience: audience, subject: subject, nonce: nonce, code: code,
                                         email: "user@example.com")
        adjust(&claims)
        return try simulator.mintIdentityToken(claims, headerOverrides: header)
    }
}

extension BridgeHarness {
    /// One request as a client sends it (`Host` and `Connection: close` added, `Content-Length` for a body), and
    /// what the client reads back.
    func request(method: String = "GET", path: String, headers: [(String, String)] = [],
                 body: [UInt8]? = nil) throws -> RawHTTPResponse {
        if listening { return try RawHTTPClient.request(port: port, method: method, path: path, headers: headers, body: body) }
        var fields = HTTPHeaders([("Host", "127.0.0.1:\(port)"), ("Connection", "close")] + headers)
        if let body { fields.add("Content-Length", String(body.count)) }
        return RawHTTPResponse(server.inProcess.respond(method: method, target: path, headers: fields, body: body ?? []))
    }

    func request(method: String = "GET", path: String, headers: [(String, String)] = [],
                 body: String) throws -> RawHTTPResponse {
        try request(method: method, path: path, headers: headers, body: Array(body.utf8))
    }
}

/// JSON API calls as an app makes them.
extension BridgeHarness {
    func api(_ path: String, method: String = "POST", json: String? = nil, bearer: String? = nil,
             contentType: String = "application/json") throws -> (status: Int, body: JSONValue, raw: RawHTTPResponse) {
        var headers: [(String, String)] = []
        if json != nil { headers.append(("Content-Type", contentType)) }
        if let bearer { headers.append(("Authorization", "Bearer \(bearer)")) }
        let response = try request(method: method, path: path, headers: headers, body: json.map { Array($0.utf8) })
        let body = (try? JSONValue.parse(response.body)) ?? .null
        return (response.status, body, response)
    }

    /// `{"k": "v", …}` with proper escaping.
    func json(_ fields: [String: JSONValue]) -> String { JSONValue.object(fields).serialized() }
}

/// A browser: a cookie jar that honours cookie paths, and the steps a person takes.
final class TestBrowser {
    struct StoredCookie { var value: String; var path: String }

    let harness: BridgeHarness
    private(set) var cookies: [String: StoredCookie] = [:]

    init(_ harness: BridgeHarness) { self.harness = harness }

    struct LoginPage {
        var state: String
        var nonce: String
        var authorizeURL: String
        var document: HTMLDocument
    }

    func cookieHeader(for path: String) -> [(String, String)] {
        let matching = cookies.filter { path.hasPrefix($0.value.path) }.map { "\($0.key)=\($0.value.value)" }
        return matching.isEmpty ? [] : [("Cookie", matching.sorted().joined(separator: "; "))]
    }

    func remember(_ response: RawHTTPResponse) {
        for header in response.headerValues("Set-Cookie") {
            let parts = header.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let first = parts.first, let equals = first.firstIndex(of: "=") else { continue }
            let name = String(first[..<equals])
            let value = String(first[first.index(after: equals)...])
            let path = parts.first { $0.lowercased().hasPrefix("path=") }.map { String($0.dropFirst(5)) } ?? "/"
            if value.isEmpty || parts.contains(where: { $0.lowercased() == "max-age=0" }) {
                cookies[name] = nil
            } else {
                cookies[name] = StoredCookie(value: value, path: path)
            }
        }
    }

    func forget(_ name: String) { cookies[name] = nil }
    func set(_ name: String, _ cookie: StoredCookie) { cookies[name] = cookie }
    func forgetBindingCookies() { cookies = cookies.filter { !$0.key.hasPrefix("asb_bind_") } }

    @discardableResult
    func get(_ path: String) throws -> RawHTTPResponse {
        let response = try harness.request(path: path, headers: cookieHeader(for: path))
        remember(response)
        return response
    }

    @discardableResult
    func post(_ path: String, form: [(String, String)], extraHeaders: [(String, String)] = []) throws -> RawHTTPResponse {
        let body = FormFields(form).urlEncoded
        let response = try harness.request(
            method: "POST", path: path,
            headers: [("Content-Type", "application/x-www-form-urlencoded")] + cookieHeader(for: path) + extraHeaders,
            body: body)
        remember(response)
        return response
    }

    func openLogin(_ path: String = "/login") throws -> LoginPage { try loginPage(try get(path)) }

    /// The login page `response` shows.
    func loginPage(_ response: RawHTTPResponse) throws -> LoginPage {
        let document = HTMLDocument(response.text)
        guard response.status == 200, let link = document.first("//a[@id='apple-signin']"),
              let href = link.attributes["href"], let state = link.attributes["data-state"],
              let nonce = link.attributes["data-nonce"] else {
            throw TestFailure("login page without a sign-in link: \(response.status)")
        }
        return LoginPage(state: state, nonce: nonce, authorizeURL: href, document: document)
    }

    /// Goes through the simulator's consent page like a person, returning the fields it auto-posts back.
    /// `redirectURI`: where the simulator must post, when the authorize URL names another than the callback (the
    /// Android relay's).
    func authorizeAtApple(_ login: LoginPage, user: SimulatedUser = .ada, hideEmail: Bool = false,
                          cancel: Bool = false, redirectURI: String? = nil) throws -> [(String, String)] {
        guard let url = URLComponents(string: login.authorizeURL), let path = url.path.isEmpty ? nil : url.path else {
            throw TestFailure("bad authorize URL")
        }
        let page = try RawHTTPClient.request(port: harness.simulatorPort, path: path + "?" + (url.percentEncodedQuery ?? ""))
        guard page.status == 200 else { throw TestFailure("authorize page answered \(page.status): \(page.text)") }
        let consent = HTMLDocument(page.text)
        var fields = consent.formFields().filter { $0.name != "user" && $0.name != "email_choice" && $0.name != "action" }
            .map { ($0.name, $0.value) }
        fields += [("user", user.sub), ("email_choice", hideEmail ? "hide" : "share"), ("action", cancel ? "cancel" : "continue")]
        let action = consent.first("//form")?.attributes["action"] ?? "/auth/authorize"
        let posted = try RawHTTPClient.request(port: harness.simulatorPort, method: "POST", path: action,
                                               headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                               body: FormFields(fields).urlEncoded)
        let autoPost = HTMLDocument(posted.text)
        guard let form = autoPost.first("//form"), form.attributes["action"] == redirectURI ?? harness.app.configuration.redirectURI else {
            throw TestFailure("simulator did not auto-post to the redirect URI: \(posted.text)")
        }
        return autoPost.formFields().map { ($0.name, $0.value) }
    }

    /// The whole web sign-in; returns the callback's response.
    func signIn(user: SimulatedUser = .ada, hideEmail: Bool = false) throws -> RawHTTPResponse {
        let login = try openLogin()
        let fields = try authorizeAtApple(login, user: user, hideEmail: hideEmail)
        return try post("/apple_redirect", form: fields)
    }
}

extension [(String, String)] {
    func value(_ name: String) -> String? { first { $0.0 == name }?.1 }

    func replacing(_ name: String, with value: String?) -> [(String, String)] {
        var result = filter { $0.0 != name }
        if let value { result.append((name, value)) }
        return result
    }
}

/// The configuration error a production start-up with these settings (over a valid base) stops with; nil if none.
func configurationProblem(_ settings: [String: String], mode: RunMode = .production) -> ConfigurationError? {
    var values = [
        "BRIDGE_PUBLIC_URL": "https://login.example.com", "BRIDGE_SECRET_KEY": Data(repeating: 7, count: 32).base64EncodedString(),
        "APPLE_SERVICES_ID": BridgeHarness.servicesID, "APPLE_BUNDLE_IDS": BridgeHarness.bundleID,
    ]
    values.merge(settings) { _, new in new }
    do {
        _ = try BridgeConfiguration(values: values, mode: mode)
        return nil
    } catch {
        return error
    }
}
