import AppleID
import AppleIDSimulator
import Bridge
import Foundation
import HTTPServer
import JOSE
import JSON
import Testing
import TestSupport

/// A throwaway `.p8` made for the test, registered with the simulator as Apple would know it.
struct TestClientKey {
    static let teamID = "TEAM123456"
    static let keyID = "KEY1234567"
    let key: ECPrivateKey
    let path: String

    init(directory: String, mode: Int = 0o600) throws {
        key = try ECPrivateKey.generate()
        path = directory + "/AuthKey_\(Self.keyID).p8"
        _ = FileManager.default.createFile(atPath: path, contents: Data(try key.pemString().utf8),
                                       attributes: [.posixPermissions: mode])
    }

    static func settings(_ path: String, teamID: String = teamID) -> [String: String] {
        ["APPLE_TEAM_ID": teamID, "APPLE_KEY_ID": keyID, "APPLE_PRIVATE_KEY_PATH": path]
    }
}

func keyDirectory() throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("p8-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// A harness whose server exchanges codes and revokes tokens with a registered key.
func keyedHarness(_ extra: [String: String] = [:]) throws -> BridgeHarness {
    let key = try TestClientKey(directory: try keyDirectory())
    let harness = try BridgeHarness(TestClientKey.settings(key.path).merging(extra) { _, new in new })
    harness.simulator.registerClientKey(teamID: TestClientKey.teamID, keyID: TestClientKey.keyID, publicKey: key.key.publicKey)
    return harness
}

extension BridgeHarness {
    /// Every byte SQLite holds on disk for this database (main file and write-ahead log).
    func databaseBytes() -> [UInt8] {
        [databasePath, databasePath + "-wal"].flatMap { (try? Array(Data(contentsOf: URL(fileURLWithPath: $0)))) ?? [] }
    }

    /// An app sign-in with a real authorization code from the simulator.
    func nativeSignIn(user: SimulatedUser = .ada) throws -> (status: Int, body: JSONValue, code: String) {
        let code = simulator.issueAuthorizationCode(clientID: BridgeHarness.bundleID, user: user)
        let token = try self.token(audience: BridgeHarness.bundleID, subject: user.sub, nonce: nil, code: code)
        let result = try api("/api/auth/apple", json: json(["idToken": .string(token), "authorizationCode": .string(code)]))
        return (result.status, result.body, code)
    }
}

extension [UInt8] {
    func contains(bytes needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return false }
        return (0...(count - needle.count)).contains { index in self[index..<(index + needle.count)].elementsEqual(needle) }
    }
}

@Suite("Apple's server side: code exchange, revocation, notifications", .serialized)
struct AppleServerSideTests {
    @Test("a web sign-in exchanges its code; Apple's refresh token is stored only encrypted and revoked on deletion")
    func webExchangeAndDeletion() throws {
        let harness = try keyedHarness()
        let browser = TestBrowser(harness)
        #expect(try browser.signIn(user: .ada).status == 303)
        let stored = harness.databaseBytes()

        // Delete through the web: the session page's form, a confirmation page, then the confirmed POST.
        let session = HTMLDocument(try browser.get("/session").text)
        let csrf = try #require(session.formFields("//form[@action='/account/delete']").first { $0.name == "csrf" }?.value)
        let confirmation = try browser.post("/account/delete", form: [("csrf", csrf)])
        #expect(confirmation.status == 200)
        let confirmFields = HTMLDocument(confirmation.text).formFields("//form[@action='/account/delete']").map { ($0.name, $0.value) }
        #expect(confirmFields.value("confirm") == "yes")
        #expect(try harness.userCount() == 1)
        let deleted = try browser.post("/account/delete", form: confirmFields)
        #expect(deleted.status == 200)
        #expect(try harness.userCount() == 0)
        #expect(try browser.get("/session").status == 303)

        let revoked = harness.simulator.revokedTokens
        #expect(revoked.count == 1)
        let token = try #require(revoked.first)
        #expect(!stored.contains(bytes: Array(token.utf8)), "the Apple refresh token is in the SQLite file in clear")
    }

    @Test("an app sign-in exchanges its native code without redirect_uri; DELETE /api/me revokes it")
    func nativeExchangeAndDeletion() throws {
        let harness = try keyedHarness(["APPLE_REQUIRE_CODE_EXCHANGE": "1"])
        let signIn = try harness.nativeSignIn()
        #expect(signIn.status == 200)
        let access = try #require(signIn.body["accessToken"]?.stringValue)
        let deletion = try harness.api("/api/me", method: "DELETE", bearer: access)
        #expect(deletion.status == 200)
        #expect(deletion.body["appleRevocation"]?.stringValue == "revoked")
        #expect(harness.simulator.revokedTokens.count == 1)
        #expect(try harness.userCount() == 0)
        #expect(try harness.api("/api/me", method: "GET", bearer: access).status == 401)
    }

    @Test("a reused code is refused by Apple and reported clearly when the exchange is required")
    func reusedCode() throws {
        let harness = try keyedHarness(["APPLE_REQUIRE_CODE_EXCHANGE": "1"])
        let first = try harness.nativeSignIn(user: .grace)
        #expect(first.status == 200)
        let token = try harness.token(audience: BridgeHarness.bundleID, subject: SimulatedUser.grace.sub, nonce: nil, code: first.code)
        let again = try harness.api("/api/auth/apple", json: harness.json(["idToken": .string(token), "authorizationCode": .string(first.code)]))
        #expect(again.status == 401)
        #expect(again.body["error"]?.stringValue == "code_exchange_failed")
        #expect(again.body["message"]?.stringValue?.contains("expired, used") == true)
    }

    @Test("without the exchange required, a failed exchange does not block the sign-in")
    func optionalExchange() throws {
        let harness = try keyedHarness()
        let token = try harness.token(audience: BridgeHarness.bundleID, nonce: nil, code: "not-a-real-code")
        let result = try harness.api("/api/auth/apple", json: harness.json(["idToken": .string(token), "authorizationCode": "not-a-real-code"]))
        #expect(result.status == 200)
    }

    @Test("deletion while Apple's revoke endpoint is down: deleted now, revoked later by the retry")
    func revocationRetried() throws {
        let harness = try keyedHarness()
        let signIn = try harness.nativeSignIn(user: .alan)
        #expect(signIn.status == 200)
        harness.simulator.isUnavailable = true
        let deletion = try harness.api("/api/me", method: "DELETE", bearer: signIn.body["accessToken"]?.stringValue)
        #expect(deletion.status == 200)
        #expect(deletion.body["appleRevocation"]?.stringValue == "queued")
        #expect(try harness.userCount() == 0)
        let pending = try harness.app.store.read { try $0.pendingRevocationCount() }
        #expect(pending == 1)

        harness.clock.advance(by: 31)
        #expect(harness.app.processDueRevocations() == 0)  // still down: postponed, not dropped
        let stillPending = try harness.app.store.read { try $0.pendingRevocationCount() }
        #expect(stillPending == 1)

        harness.simulator.isUnavailable = false
        harness.clock.advance(by: 61)
        #expect(harness.app.processDueRevocations() == 1)
        let afterRetry = try harness.app.store.read { try $0.pendingRevocationCount() }
        #expect(afterRetry == 0)
        #expect(harness.simulator.revokedTokens.count == 1)
    }

    @Test("with the exchange required: no code is a 400, and Apple refusing our own credentials is a 502 for operators")
    func requiredExchangeFailures() throws {
        let harness = try keyedHarness(["APPLE_REQUIRE_CODE_EXCHANGE": "1"])
        let noCode = try harness.api("/api/auth/apple", json: harness.json([
            "idToken": .string(try harness.token(audience: BridgeHarness.bundleID, nonce: nil)),
        ]))
        #expect(noCode.status == 400)
        #expect(noCode.body["error"]?.stringValue == "missing_authorization_code")

        // Apple knows another key for this team: every client secret we sign is refused.
        harness.simulator.registerClientKey(teamID: TestClientKey.teamID, keyID: TestClientKey.keyID,
                                            publicKey: try ECPrivateKey.generate().publicKey)
        let refused = try harness.nativeSignIn(user: .grace)
        #expect(refused.status == 502)
        #expect(refused.body["error"]?.stringValue == "apple_rejected_server")
        #expect(try harness.userCount() == 0)
    }

    @Test("the deleted page says when there was nothing to revoke at Apple")
    func deletedWithoutAppleToken() throws {
        let harness = try BridgeHarness()
        let browser = TestBrowser(harness)
        #expect(try browser.signIn().status == 303)
        let csrf = try #require(HTMLDocument(try browser.get("/session").text)
            .formFields("//form[@action='/account/delete']").first { $0.name == "csrf" }?.value)
        let deleted = try browser.post("/account/delete", form: [("csrf", csrf), ("confirm", "yes")])
        #expect(deleted.status == 200)
        let text = HTMLDocument(deleted.text).text
        #expect(text.contains("no access to revoke"))
        #expect(!text.contains("has been revoked"))
    }

    @Test("a key file readable by others stops start-up with one line naming the key")
    func keyFilePermissions() throws {
        let key = try TestClientKey(directory: try keyDirectory(), mode: 0o644)
        #expect {
            _ = try BridgeHarness(TestClientKey.settings(key.path))
        } throws: { error in
            let text = String(describing: error)
            return text.hasPrefix("configuration error: APPLE_PRIVATE_KEY_PATH") && text.contains("chmod 600")
        }
    }

    @Suite("Server-to-server notifications")
    struct Notifications {
        func post(_ harness: BridgeHarness, _ body: String) throws -> (status: Int, body: JSONValue) {
            let result = try harness.api("/apple/notifications", json: body)
            return (result.status, result.body)
        }

        @Test("consent-revoked ends the user's sessions and unlinks Apple")
        func consentRevoked() throws {
            let harness = try keyedHarness()
            let browser = TestBrowser(harness)
            #expect(try browser.signIn(user: .ada).status == 303)
            let body = try harness.simulator.mintNotification(type: "consent-revoked", subject: SimulatedUser.ada.sub,
                                                              audience: BridgeHarness.servicesID)
            let result = try post(harness, body)
            #expect(result.status == 200)
            #expect(result.body["status"]?.stringValue == "applied")
            #expect(try browser.get("/session").status == 303)
            let appleToken = try harness.app.store.read { try $0.appleToken(userID: 1) }
            #expect(appleToken == nil)
            // The same event again is harmless.
            #expect(try post(harness, body).body["status"]?.stringValue == "duplicate")
        }

        @Test("account-delete (and Apple's other spelling) deletes the user's data", arguments: ["account-delete", "account-deleted"])
        func accountDelete(type: String) throws {
            let harness = try BridgeHarness()
            #expect(try TestBrowser(harness).signIn(user: .grace).status == 303)
            let body = try harness.simulator.mintNotification(type: type, subject: SimulatedUser.grace.sub,
                                                              audience: BridgeHarness.servicesID)
            #expect(try post(harness, body).status == 200)
            #expect(try harness.userCount() == 0)
        }

        @Test("email-disabled and email-enabled update the forwarding flag")
        func emailForwarding() throws {
            let harness = try BridgeHarness()
            let signIn = try harness.api("/api/auth/apple", json: harness.json([
                "idToken": .string(try harness.token(audience: BridgeHarness.bundleID, subject: SimulatedUser.alan.sub, nonce: nil)),
            ]))
            let access = try #require(signIn.body["accessToken"]?.stringValue)
            let disabled = try harness.simulator.mintNotification(type: "email-disabled", subject: SimulatedUser.alan.sub,
                                                                  audience: BridgeHarness.bundleID,
                                                                  email: SimulatedUser.alan.privateRelayEmail, isPrivateEmail: true)
            #expect(try post(harness, disabled).status == 200)
            #expect(try harness.api("/api/me", method: "GET", bearer: access).body["emailForwardingEnabled"] == .bool(false))
            let enabled = try harness.simulator.mintNotification(type: "email-enabled", subject: SimulatedUser.alan.sub,
                                                                 audience: BridgeHarness.bundleID)
            #expect(try post(harness, enabled).status == 200)
            #expect(try harness.api("/api/me", method: "GET", bearer: access).body["emailForwardingEnabled"] == .bool(true))
        }

        @Test("a forged or unknown notification is refused with 400 and changes nothing")
        func forged() throws {
            let harness = try BridgeHarness()
            #expect(try TestBrowser(harness).signIn(user: .ada).status == 303)
            let other = try AppleIDStandIn()  // another key: a forger's
            let forged = try other.mintNotification(type: "account-delete", subject: SimulatedUser.ada.sub,
                                                    audience: BridgeHarness.servicesID)
            let refused = try post(harness, forged)
            #expect(refused.status == 400)
            #expect(refused.body["error"]?.stringValue == "invalid_notification")
            let unknownType = try harness.simulator.mintNotification(type: "account-exploded", subject: SimulatedUser.ada.sub,
                                                                     audience: BridgeHarness.servicesID)
            #expect(try post(harness, unknownType).status == 400)
            let wrongAudience = try harness.simulator.mintNotification(type: "account-delete", subject: SimulatedUser.ada.sub,
                                                                       audience: "com.someone.else")
            #expect(try post(harness, wrongAudience).status == 400)
            #expect(try post(harness, "{\"payload\":\"garbage\"}").status == 400)
            #expect(try post(harness, "not json").status == 400)
            let old = try harness.simulator.mintNotification(type: "account-delete", subject: SimulatedUser.ada.sub,
                                                             audience: BridgeHarness.servicesID,
                                                             issuedAt: Date().addingTimeInterval(-8 * 86_400))
            #expect(try post(harness, old).status == 400)
            #expect(try harness.userCount() == 1)
        }
    }
}
