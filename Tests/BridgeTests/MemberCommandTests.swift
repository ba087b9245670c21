import AppleIDSimulator
import Bridge
import Foundation
import JOSE
import JSON
import Testing
import TestSupport

/// `apple-signin-bridge members …` as an operator runs it: the real executable on the SQLite file of a running
/// server, after real sign-ins.
@Suite("The members command", .serialized)
struct MemberCommandTests {
    @Test("find, export (no secret in it), delete refused without --yes, delete revoking at Apple, then not found; one audit line each")
    func accessThenErasure() throws {
        let secretKey = Data(SecureRandom.bytes(32)).base64EncodedString()
        let key = try TestClientKey(directory: try keyDirectory())
        let harness = try BridgeHarness(TestClientKey.settings(key.path).merging(["BRIDGE_SECRET_KEY": secretKey]) { _, new in new })
        harness.simulator.registerClientKey(teamID: TestClientKey.teamID, keyID: TestClientKey.keyID, publicKey: key.key.publicKey)
        let browser = TestBrowser(harness)
        #expect(try browser.signIn(user: .ada).status == 303)
        let sessionCookie = try #require(browser.cookies.first { $0.key.hasSuffix("session") }?.value.value)
        let app = try harness.nativeSignIn(user: .ada)
        #expect(app.status == 200)
        let refreshToken = try #require(app.body["refreshToken"]?.stringValue)
        let accessToken = try #require(app.body["accessToken"]?.stringValue)
        let environment = TestClientKey.settings(key.path).merging([
            "BRIDGE_DATABASE": "sqlite:\(harness.databasePath)", "BRIDGE_SECRET_KEY": secretKey,
            "APPLE_SERVICES_ID": BridgeHarness.servicesID, "APPLE_BUNDLE_IDS": BridgeHarness.bundleID,
            "APPLE_ID_URL": "http://127.0.0.1:\(harness.simulatorPort)",
        ]) { _, new in new }
        func members(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
            try RunningProcess(["members"] + arguments, environment: environment).wait()
        }

        let found = try members(["find", "--sub", SimulatedUser.ada.sub])
        #expect(found.status == 0, "stderr: \(found.errors)")
        let memberID = try #require(try JSONValue.parse(found.output).arrayValue?.first?["memberId"]?.int64Value)
        #expect(found.errors.contains("event=member_request action=find by=sub member_id=\(memberID) outcome=found"))
        #expect(!found.errors.contains(SimulatedUser.ada.sub))

        let exported = try members(["export", "--id", String(memberID)])
        #expect(exported.status == 0, "stderr: \(exported.errors)")
        let document = try JSONValue.parse(exported.output)
        #expect(document["member"]?["sub"]?.stringValue == SimulatedUser.ada.sub)
        #expect(document["member"]?["email"]?.stringValue != nil)
        // Signed in within the same second: in either order.
        #expect(document["sessions"]?.arrayValue?.compactMap { $0["signInFlow"]?.stringValue }.sorted() == ["api", "web"])
        #expect(document["refreshTokenFamilies"]?.arrayValue?.count == 1)
        #expect(document["appleToken"]?["clientId"]?.stringValue == BridgeHarness.bundleID)
        for secret in [sessionCookie, refreshToken, accessToken] {
            #expect(!exported.output.contains(secret), "the export holds a secret")
        }
        #expect(exported.errors.contains("event=member_request action=export member_id=\(memberID) outcome=exported"))

        let refused = try members(["delete", "--id", String(memberID)])
        #expect(refused.status == 4)
        #expect(refused.output.isEmpty)
        #expect(refused.errors.contains("not deleted: member \(memberID) has 2 sessions, 1 refresh-token family"))
        #expect(try harness.userCount() == 1)
        #expect(harness.simulator.revokedTokens.isEmpty)

        let deleted = try members(["delete", "--id", String(memberID), "--yes"])
        #expect(deleted.status == 0, "stderr: \(deleted.errors)")
        #expect(try JSONValue.parse(deleted.output)["appleRevocation"]?.stringValue == "revoked")
        #expect(deleted.errors.contains(
            "event=member_request action=delete member_id=\(memberID) outcome=deleted apple_revocation=revoked"))
        #expect(try harness.userCount() == 0)
        // Apple got the member's refresh token back, and it was never in the export.
        let appleToken = try #require(harness.simulator.revokedTokens.first)
        #expect(harness.simulator.revokedTokens.count == 1)
        #expect(!exported.output.contains(appleToken))
        #expect(try browser.get("/session").status == 303)

        let gone = try members(["find", "--sub", SimulatedUser.ada.sub])
        #expect(gone.status == 3)
        #expect(gone.output.isEmpty)
        #expect(gone.errors.hasSuffix("no member has that sub\n"))
        #expect(try members(["export", "--id", String(memberID)]).status == 3)
    }

    @Test("a wrong command line exits 2 with one line saying what is wrong, before any database is opened", arguments: [
        (["find", "--sub", "a", "--sub", "b"], "option --sub is given twice"),
        (["export", "--id", "1", "--id", "2"], "option --id is given twice"),
        (["export", "--id", "twelve"], "--id must be a member id, a positive whole number"),
        (["find", "--sub", "a", "--email", "b@example.com"], "members find takes --sub or --email, not both"),
        (["delete"], "members delete needs --id ID"),
        (["export", "--member", "1"], "unknown option --member"),
    ])
    func usageErrors(arguments: [String], expected: String) throws {
        let result = try RunningProcess(["members"] + arguments, environment: ["BRIDGE_DATABASE": "sqlite:/nonexistent/bridge.sqlite3"]).wait()
        #expect(result.status == 2)
        #expect(result.output.isEmpty)
        #expect(result.errors.hasPrefix(expected), "stderr: \(result.errors)")
        #expect(result.errors.split(separator: "\n").count == 1, "stderr: \(result.errors)")
    }

    @Test("an unreachable database exits 1 and names BRIDGE_DATABASE")
    func unreachableDatabase() throws {
        let result = try RunningProcess(["members", "export", "--id", "1"], environment: [
            "BRIDGE_DATABASE": "postgres://bridge@127.0.0.1:9/bridge", "APPLE_SERVICES_ID": BridgeHarness.servicesID,
            "BRIDGE_SECRET_KEY": Data(repeating: 7, count: 32).base64EncodedString(),
        ]).wait()
        #expect(result.status == 1)
        #expect(result.errors.contains("configuration error: BRIDGE_DATABASE cannot be opened"), "stderr: \(result.errors)")
        #expect(result.errors.contains("event=member_request action=export member_id=1 outcome=failed"))
    }
}
