import AppleID
@testable import Bridge
import BridgeMetrics
import Foundation
import HTTPServer
import JOSE
import JSON
import Logging
import SignIn
import Storage
import Testing

/// The sign-in transaction on its own: a real SQLite file, no listener, no simulator, no HTTP.
@Suite("Sign-in core without sockets")
struct SignInServiceTests {
    static let servicesID = "com.example.web"
    static let bundleID = "com.example.app"

    /// A fresh store and a sign-in service over it; a code exchange is required only when told.
    final class Fixture {
        let directory: String
        let store: any Store
        let service: SignInService
        /// Whole seconds, as the store keeps times.
        let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))

        init(requireCodeExchange: Bool = false) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("signin-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            store = try StoreFactory.open("sqlite:\(directory)/core.sqlite3")
            _ = try store.migrate()
            let (metrics, logger) = (Metrics(), Logger.silent)
            let exchanger = CodeExchanger(client: nil, servicesID: SignInServiceTests.servicesID,
                                          redirectURI: "https://login.example.com/apple_redirect",
                                          isRequired: requireCodeExchange, metrics: metrics, logger: logger)
            let fixed = now
            service = SignInService(signIns: store, clock: WallClock { fixed }, vault: AppleTokenVault(key: SecureRandom.bytes(32)),
                                    exchanger: exchanger, sessionIssuer: SessionIssuer(metrics: metrics, logger: logger),
                                    servicesID: SignInServiceTests.servicesID, replayLeeway: 60,
                                    metrics: metrics, logger: logger)
        }

        deinit { try? FileManager.default.removeItem(atPath: directory) }

        func identity(audience: String = SignInServiceTests.servicesID, nonceVerified: Bool = true) -> AppleIdentity {
            AppleIdentity(subject: "001234.core.user", audience: audience, issuer: "https://appleid.apple.com",
                          email: "core@example.com", emailVerified: true, isPrivateEmail: false, realUserStatus: nil,
                          nonceVerified: nonceVerified, issuedAt: now, expiresAt: now.addingTimeInterval(600), authTime: nil)
        }

        /// A login attempt as `GET /login` stores it; returns the digest of its state.
        func loginAttempt() throws -> String {
            let digest = SecretTokens.digest(SecretTokens.random())
            try store.write {
                try $0.insertLoginAttempt(LoginAttempt(state: digest, nonce: "n", bindingHash: "b", createdAt: now,
                                                       expiresAt: now.addingTimeInterval(600), consumedAt: nil))
            }
            return digest
        }

        func serverNonce(expiresIn seconds: TimeInterval = 600) throws -> String {
            let nonce = SignInService.serverNoncePrefix + SecretTokens.random()
            try store.write {
                try $0.insertAPINonce(APINonce(nonce: nonce, createdAt: now, expiresAt: now.addingTimeInterval(seconds)))
            }
            return nonce
        }

        func web(_ stateDigest: String, token: String = SecretTokens.random(), name: String? = nil) -> SignInRequest {
            SignInRequest(identity: identity(), identityToken: token, flow: .web, proof: .loginAttempt(stateDigest: stateDigest),
                          codeExchange: .skipped, displayName: name, grant: .browserSession)
        }

        func api(nonce: String?, audience: String = SignInServiceTests.bundleID, token: String = SecretTokens.random()) -> SignInRequest {
            SignInRequest(identity: identity(audience: audience, nonceVerified: nonce != nil), identityToken: token, flow: .api,
                          proof: .apiNonce(nonce), codeExchange: .skipped, displayName: nil, grant: .appSession)
        }

        /// The failure `request` ends in, or nil when it signs in.
        func failure(_ request: SignInRequest) -> SignInFailure? {
            do {
                _ = try service.signIn(request)
                return nil
            } catch let failure as SignInFailure {
                return failure
            } catch {
                Issue.record("unexpected error \(error)")
                return nil
            }
        }
    }

    @Test("a web sign-in creates the user and a week-long browser session, and spends the login attempt")
    func webSignIn() throws {
        let fixture = try Fixture()
        let signedIn = try fixture.service.signIn(fixture.web(try fixture.loginAttempt(), name: "Ada Lovelace"))
        #expect(signedIn.isNewUser)
        #expect(signedIn.refreshToken == nil)
        #expect(signedIn.user.displayName == "Ada Lovelace")
        let now = fixture.now
        let stored = try fixture.store.read { try $0.session(idHash: SecretTokens.digest(signedIn.sessionID), now: now) }
        #expect(stored?.session.signInFlow == .web)
        #expect(stored?.session.expiresAt == now.addingTimeInterval(SessionIssuer.browserSessionLifetime))
        #expect(stored?.session.nonceVerified == true)
    }

    @Test("a login attempt signs in once; the second callback is refused and creates no session")
    func loginAttemptOnce() throws {
        let fixture = try Fixture()
        let state = try fixture.loginAttempt()
        _ = try fixture.service.signIn(fixture.web(state))
        let second = fixture.failure(fixture.web(state))
        #expect(second == .loginAttemptAlreadyUsed)
    }

    @Test("the same identity token signs in once, whatever proof comes with it")
    func tokenReplay() throws {
        let fixture = try Fixture()
        let token = SecretTokens.random()
        _ = try fixture.service.signIn(fixture.web(try fixture.loginAttempt(), token: token))
        let replayed = fixture.failure(fixture.web(try fixture.loginAttempt(), token: token))
        #expect(replayed == .tokenReplayed)
        let users = try fixture.store.read { try $0.countUsers() }
        #expect(users == 1)
    }

    @Test("an app sign-in with a server nonce: a 30-day session, a refresh token, nonce verified; the nonce works once")
    func apiWithServerNonce() throws {
        let fixture = try Fixture()
        let nonce = try fixture.serverNonce()
        let signedIn = try fixture.service.signIn(fixture.api(nonce: nonce))
        #expect(signedIn.nonceVerified)
        #expect(signedIn.refreshToken != nil)
        let now = fixture.now
        let stored = try fixture.store.read { try $0.session(idHash: signedIn.sessionIDHash, now: now) }
        #expect(stored?.session.signInFlow == .api)
        #expect(stored?.session.expiresAt == now.addingTimeInterval(SessionIssuer.appSessionLifetime))
        let again = fixture.failure(fixture.api(nonce: nonce))
        #expect(again == .nonceAlreadyUsed)
    }

    @Test("an app's own nonce signs in unverified; an expired or unknown server nonce is refused as expired")
    func apiNonces() throws {
        let fixture = try Fixture()
        let ownNonce = try fixture.service.signIn(fixture.api(nonce: "the-app-made-this-one"))
        #expect(!ownNonce.nonceVerified)
        let expired = fixture.failure(fixture.api(nonce: try fixture.serverNonce(expiresIn: -1)))
        #expect(expired == .nonceExpired)
        let cleanedUp = fixture.failure(fixture.api(nonce: SignInService.serverNoncePrefix + "gone"))
        #expect(cleanedUp == .nonceExpired)
    }

    @Test("a web Services ID token on the API needs a server nonce; with one it signs in")
    func servicesIDNeedsServerNonce() throws {
        let fixture = try Fixture()
        let withoutNonce = fixture.failure(fixture.api(nonce: nil, audience: Self.servicesID))
        #expect(withoutNonce == .nonceRequired)
        let appNonce = fixture.failure(fixture.api(nonce: "the-app-made-this-one", audience: Self.servicesID))
        #expect(appNonce == .nonceRequired)
        let signedIn = try fixture.service.signIn(fixture.api(nonce: try fixture.serverNonce(), audience: Self.servicesID))
        #expect(signedIn.nonceVerified)
    }

    @Test("a required code exchange: no code, a refused code, Apple down and a refused client secret each stop the sign-in")
    func requiredCodeExchange() throws {
        let fixture = try Fixture(requireCodeExchange: true)
        let cases: [(CodeExchange, CodeExchangeRefusal)] = [
            (CodeExchange(outcome: .skipped, codeSent: false), .missingCode),
            (CodeExchange(outcome: .skipped, codeSent: true), .serverMisconfigured),
            (CodeExchange(outcome: .failed(.fromApple(code: "invalid_grant")), codeSent: true), .codeRefused),
            (CodeExchange(outcome: .failed(.fromApple(code: "invalid_client")), codeSent: true), .serverMisconfigured),
            (CodeExchange(outcome: .failed(.unreachable("timeout")), codeSent: true), .appleUnavailable),
            (CodeExchange(outcome: .failed(.idTokenRejected(.keysUnavailable)), codeSent: true), .appleUnavailable),
            (CodeExchange(outcome: .failed(.subjectMismatch), codeSent: true), .codeRefused),
        ]
        for (exchange, refusal) in cases {
            var request = fixture.web(try fixture.loginAttempt())
            request.codeExchange = exchange
            let failure = fixture.failure(request)
            #expect(failure == .codeExchange(refusal))
        }
        let users = try fixture.store.read { try $0.countUsers() }
        #expect(users == 0)
    }

    @Test("without APPLE_REQUIRE_CODE_EXCHANGE a failed exchange is only logged: the sign-in goes on")
    func optionalCodeExchange() throws {
        let fixture = try Fixture(requireCodeExchange: false)
        var request = fixture.web(try fixture.loginAttempt())
        request.codeExchange = CodeExchange(outcome: .failed(.fromApple(code: "invalid_grant")), codeSent: true)
        let signedIn = try fixture.service.signIn(request)
        #expect(signedIn.isNewUser)
    }
}

@Suite("Display names from unsigned client input")
struct DisplayNameTests {
    @Test("Apple's user JSON, iOS name components and plain strings give the same cleaned name")
    func shapes() throws {
        let apple = DisplayName.fromUserJSON(#"{"name":{"firstName":" Ada ","lastName":"Lovelace"},"email":"x@y.z"}"#)
        #expect(apple == "Ada Lovelace")
        let components = DisplayName.fromAPIBody(try JSONValue.parse(Array(#"{"fullName":{"givenName":"Ada","familyName":"Lovelace"}}"#.utf8)))
        #expect(components == "Ada Lovelace")
        let plain = DisplayName.fromAPIBody(try JSONValue.parse(Array(#"{"snsUserName":"Ada\nLovelace\u0001"}"#.utf8)))
        #expect(plain == "AdaLovelace")
    }

    @Test("blank, oversized or not-JSON input gives no name; long names are cut at 200 characters")
    func limits() {
        #expect(DisplayName.fromUserJSON(nil) == nil)
        #expect(DisplayName.fromUserJSON("not json") == nil)
        #expect(DisplayName.fromUserJSON(#"{"name":{"firstName":"   "}}"#) == nil)
        #expect(DisplayName.fromUserJSON(String(repeating: " ", count: 5000)) == nil)
        let long = DisplayName.clean(String(repeating: "a", count: 300))
        #expect(long?.count == 200)
    }
}
