import AppleID
import AppleIDSimulator
import Foundation
import HTTPServer
import JOSE
import Synchronization
import Testing
import TestSupport

@Suite("AppleID")
struct AppleIDTests {}

/// Passes requests through to a real transport, counting POSTs and optionally answering the first ones itself
/// (a 5xx or a transport failure) to exercise the retry policy.
final class CountingTransport: AppleHTTPTransport {
    enum Injected: Sendable {
        case status(Int)
        case failure(AppleHTTPError)
    }

    private let base: any AppleHTTPTransport
    private let posted = Mutex<[(url: String, fields: [(String, String)])]>([])
    private let injected = Mutex<[Injected]>([])

    init(_ base: any AppleHTTPTransport) { self.base = base }

    func inject(_ answers: [Injected]) { injected.withLock { $0 = answers } }

    var posts: [(url: String, fields: [(String, String)])] { posted.withLock { $0 } }

    func posts(to path: String) -> Int { posts.filter { $0.url.hasSuffix(path) }.count }

    func get(_ url: String) throws(AppleHTTPError) -> HTTPExchange { try base.get(url) }

    func postForm(_ url: String, fields: [(String, String)]) throws(AppleHTTPError) -> HTTPExchange {
        posted.withLock { $0.append((url, fields)) }
        let next: Injected? = injected.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        switch next {
        case let .status(status)?: return HTTPExchange(status: status, body: Array("busy".utf8))
        case let .failure(error)?: throw error
        case nil: return try base.postForm(url, fields: fields)
        }
    }
}

/// A `.p8` file in its own temporary directory, created with mode 0600 (then changed when asked).
struct KeyFile {
    let directory: String
    let path: String

    init(contents: String, mode: mode_t = 0o600, name: String = "AuthKey_KEY1234567.p8") throws {
        directory = NSTemporaryDirectory() + "appleid-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        path = directory + "/" + name
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        try #require(fd >= 0, "creating \(path)")
        let bytes = Array(contents.utf8)
        #expect(write(fd, bytes, bytes.count) == bytes.count)
        close(fd)
        if mode != 0o600 { chmod(path, mode) }
    }

    static func generated(mode: mode_t = 0o600) throws -> KeyFile {
        try KeyFile(contents: try ECPrivateKey.generate().pemString(), mode: mode)
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }
}

/// The simulator on a loopback port with a developer key registered, and an AppleID stack pointed at it.
final class SimulatorFixture: Sendable {
    static let teamID = "TEAM123456"
    static let keyID = "KEY1234567"
    static let servicesID = "com.example.web"
    static let bundleID = "com.example.app"
    static let redirectURI = "https://bridge.example.com/apple_redirect"

    let appleID: RunningSimulator
    var simulator: AppleIDStandIn { appleID.simulator }
    let transport: CountingTransport
    let key: AppleClientKey
    /// The same key as `key`, for secrets that differ from it in one claim only.
    let privateKey: ECPrivateKey
    let keys: JWKSCache
    let verifier: IdentityTokenVerifier
    let sleeps = Mutex<[TimeInterval]>([])

    var baseURL: String { appleID.url }

    init(registerKey: Bool = true) throws {
        let appleID = try RunningSimulator(returnURLs: .only([Self.redirectURI]))
        self.appleID = appleID
        // The key goes through the file loader, as in production.
        privateKey = try ECPrivateKey.generate()
        let file = try KeyFile(contents: try privateKey.pemString())
        defer { file.remove() }
        key = try AppleClientKey.load(teamID: Self.teamID, keyID: Self.keyID, path: file.path)
        if registerKey { appleID.simulator.registerClientKey(teamID: Self.teamID, keyID: Self.keyID, publicKey: key.publicKey) }
        transport = CountingTransport(URLSessionTransport(timeout: 2))
        keys = JWKSCache(url: appleID.url + "/auth/keys", transport: transport)
        verifier = IdentityTokenVerifier(
            policy: VerificationPolicy(issuers: [appleID.simulator.issuer], servicesID: Self.servicesID, bundleIDs: [Self.bundleID]),
            keys: keys)
    }

    func client(key: AppleClientKey? = nil, verifier: IdentityTokenVerifier? = nil, attempts: Int = 3) -> AppleTokenClient {
        AppleTokenClient(baseURL: baseURL + "/", transport: transport, secrets: ClientSecretProvider(key: key ?? self.key),
                         verifier: verifier ?? self.verifier, attempts: attempts, backoff: 0.2,
                         sleep: { [self] seconds in sleeps.withLock { $0.append(seconds) } })
    }

    /// A web code: consent submitted on the simulator's authorize page for the Services ID and our redirect_uri.
    func webCode(user: SimulatedUser = .ada) throws -> String {
        let form = [("client_id", Self.servicesID), ("redirect_uri", Self.redirectURI), ("response_type", "code id_token"),
                    ("scope", "name email"), ("response_mode", "form_post"), ("state", "s-1"), ("nonce", "n-1"),
                    ("user", user.sub), ("email_choice", "share"), ("action", "continue")]
        let response = try RawHTTPClient.request(port: appleID.port, method: "POST", path: "/auth/authorize",
                                                 headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                                 body: FormFields(form).urlEncoded)
        try #require(response.status == 200, "consent: \(response.status)")
        let fields = HTMLDocument(response.text).formFields()
        return try #require(fields.first { $0.name == "code" }?.value, "no code in the form_post page")
    }

    /// A native code: as the Sign in with Apple sheet hands it to an app (bundle ID, no redirect_uri).
    func nativeCode(user: SimulatedUser = .ada) -> String {
        simulator.issueAuthorizationCode(clientID: Self.bundleID, user: user)
    }
}

/// The posted form of one request as a dictionary.
func fieldMap(_ fields: [(String, String)]) -> [String: String] {
    Dictionary(fields, uniquingKeysWith: { first, _ in first })
}
