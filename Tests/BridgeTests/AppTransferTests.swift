import AppleIDSimulator
import Foundation
import JOSE
import JSON
import Storage
import Testing
import TestSupport

/// A developer team's `.p8` key, registered with the simulator as Apple would know it.
private struct TeamKey {
    let teamID: String
    let keyID: String
    let path: String

    let key: ECPrivateKey

    init(teamID: String, keyID: String) throws {
        key = try ECPrivateKey.generate()
        self.teamID = teamID
        self.keyID = keyID
        path = try keyDirectory() + "/AuthKey_\(keyID).p8"
        _ = FileManager.default.createFile(atPath: path, contents: Data(try key.pemString().utf8),
                                           attributes: [.posixPermissions: 0o600])
    }

    func register(with simulator: AppleIDStandIn) {
        simulator.registerClientKey(teamID: teamID, keyID: keyID, publicKey: key.publicKey)
    }

    var settings: [String: String] {
        ["APPLE_TEAM_ID": teamID, "APPLE_KEY_ID": keyID, "APPLE_PRIVATE_KEY_PATH": path]
    }
}

/// `transfer export` as team A, the app moved to team B in the simulator, `transfer import` as team B: the real
/// executable against the real server's SQLite file and the simulator, over loopback HTTP.
@Suite("App transfer between Apple developer teams", .serialized)
struct AppTransferTests {
    static let teamA = "TEAMA12345"
    static let teamB = "TEAMB98765"

    /// The server, with no team or running as `serverTeam` (as after the transfer, APPLE_TEAM_ID switched), and the
    /// environment the commands run with for either team.
    private final class Transfer {
        let harness: BridgeHarness
        let teamA: TeamKey
        let teamB: TeamKey

        /// Settings the server and the commands both get (BRIDGE_WEBHOOK_*).
        let shared: [String: String]

        init(serverTeam: String? = nil, shared: [String: String] = [:]) throws {
            teamA = try TeamKey(teamID: AppTransferTests.teamA, keyID: "KEYA123456")
            teamB = try TeamKey(teamID: AppTransferTests.teamB, keyID: "KEYB123456")
            self.shared = shared
            let server = [teamA, teamB].first { $0.teamID == serverTeam }
            harness = try BridgeHarness((server?.settings ?? [:]).merging(shared) { _, new in new })
            teamA.register(with: harness.simulator)
            teamB.register(with: harness.simulator)
        }

        func environment(_ team: TeamKey) -> [String: String] {
            team.settings.merging([
                "BRIDGE_DATABASE": "sqlite:\(harness.databasePath)",
                "BRIDGE_SECRET_KEY": Data(repeating: 7, count: 32).base64EncodedString(),
                "APPLE_BUNDLE_IDS": BridgeHarness.bundleID,
                "APPLE_ID_URL": "http://127.0.0.1:\(harness.simulatorPort)",
            ].merging(shared) { _, new in new }) { _, new in new }
        }

        func run(_ arguments: [String], as team: TeamKey) throws -> (status: Int32, output: String, errors: String) {
            try RunningProcess(["transfer"] + arguments, environment: environment(team)).wait()
        }

        /// An app sign-in through the JSON API with a token the simulator signs now (its current `sub` and, after
        /// the move, `transfer_sub`); returns member id and access token.
        func signIn(_ user: SimulatedUser, subject: String? = nil) throws -> (memberID: Int, accessToken: String, existing: Bool) {
            let simulator = harness.simulator
            let token = try harness.token(audience: BridgeHarness.bundleID, subject: subject ?? simulator.currentSubject(of: user),
                                          nonce: nil) { $0.transferSubject = simulator.currentTransferSubject(of: user) }
            let result = try harness.api("/api/auth/apple", json: harness.json(["idToken": .string(token)]))
            guard result.status == 200, let id = result.body["memberId"]?.doubleValue,
                  let accessToken = result.body["accessToken"]?.stringValue else {
                throw TestFailure("sign-in failed: \(result.status) \(result.body)")
            }
            return (Int(id), accessToken, result.body["isExistingMember"] == .bool(true))
        }

        func me(_ accessToken: String) throws -> JSONValue {
            try harness.api("/api/me", method: "GET", bearer: accessToken).body
        }

        func member(_ id: Int) throws -> User? { try harness.app.store.read { try $0.user(id: Int64(id)) } }
        func transfer(_ id: Int) throws -> MemberTransfer? { try harness.app.store.read { try $0.memberTransfer(userID: Int64(id)) } }
    }

    @Test("with webhooks, each member the import moves is reported as member.transferred, written with the move")
    func importSendsMemberTransferred() throws {
        let receiver = try WebhookReceiver()
        let transfer = try Transfer(shared: receiver.settings())
        let ada = try transfer.signIn(.ada)
        #expect(try transfer.run(["export", "--target-team", Self.teamB], as: transfer.teamA).status == 0)
        transfer.harness.simulator.transferApp(toTeam: Self.teamB)
        let imported = try transfer.run(["import"], as: transfer.teamB)
        #expect(imported.status == 0, "stdout: \(imported.output)\nstderr: \(imported.errors)")
        // Events are not ordered (docs/webhooks.md): both may go out in one pass, side by side.
        let all = try receiver.await(2)
        #expect(all.compactMap(\.type).sorted() == ["member.created", "member.transferred"])
        #expect(all.first { $0.type == "member.transferred" }?.data == ["memberId": .integer(ada.memberID), "teamId": .string(Self.teamB)])
    }

    @Test("export as team A, import as team B: members keep id, sessions and data; unknown members are listed and stay; both resume")
    func exportThenImport() throws {
        let transfer = try Transfer()
        let simulator = transfer.harness.simulator
        let ada = try transfer.signIn(.ada)
        let grace = try transfer.signIn(.grace)
        let stranger = try transfer.signIn(.ada, subject: "001234.deleted.account")  // a person Apple no longer knows

        // Before the move, as team A.
        let export = try transfer.run(["export", "--target-team", Self.teamB], as: transfer.teamA)
        #expect(export.status == 0, "stdout: \(export.output)\nstderr: \(export.errors)")
        #expect(export.output.contains("transfer export: 3 members, 0 already have a transfer identifier for team \(Self.teamB)"))
        #expect(export.output.contains("member \(stranger.memberID) (sub 001234.deleted.account) has no transfer identifier"))
        #expect(export.output.contains("transfer export: done, 2/3 members, 1 unknown to Apple (listed above), 0 failed"))
        #expect(try transfer.transfer(ada.memberID)?.transferSub == SimulatedUser.ada.transferSubject(forTeam: Self.teamB))
        #expect(try transfer.transfer(grace.memberID)?.targetTeam == Self.teamB)
        #expect(try transfer.transfer(stranger.memberID) == nil)
        #expect(!export.errors.contains("eyJ"), "no token or client secret in the logs")

        // Run again: only the member without an identifier is asked for.
        let callsBefore = simulator.userMigrationCallCount
        let again = try transfer.run(["export", "--target-team", Self.teamB], as: transfer.teamA)
        #expect(again.status == 0, "stdout: \(again.output)")
        #expect(again.output.contains("3 members, 2 already have a transfer identifier"))
        #expect(simulator.userMigrationCallCount == callsBefore + 1)

        // The app moves to team B. A person Apple knew but whose transfer identifier it then forgot (deleted
        // meanwhile) is exported too, so the import has someone to leave in place.
        simulator.transferApp(toTeam: Self.teamB)
        try transfer.harness.app.store.write {
            try $0.recordTransferExport(userID: Int64(stranger.memberID), transferSub: "820417.forgotten.0314",
                                        targetTeam: Self.teamB, now: Date())
        }

        let imported = try transfer.run(["import"], as: transfer.teamB)
        #expect(imported.status == 0, "stdout: \(imported.output)\nstderr: \(imported.errors)")
        #expect(imported.output.contains("transfer import: 3 members to move to team \(Self.teamB)"))
        #expect(imported.output.contains("member \(stranger.memberID) left in place: Apple does not know its transfer_sub 820417.forgotten.0314 (invalid_request)"))
        #expect(imported.output.contains("transfer import: done, 2 moved, 1 left in place (listed above), 0 failed"))

        // Same members, new subs, sessions still valid.
        let adaNow = try #require(try transfer.member(ada.memberID))
        #expect(adaNow.providerUserID == SimulatedUser.ada.subject(inTeam: Self.teamB))
        #expect(adaNow.displayName == "Ada Lovelace" || adaNow.displayName == nil)
        #expect(try transfer.me(ada.accessToken)["memberId"]?.doubleValue == Double(ada.memberID))
        #expect(try transfer.me(grace.accessToken)["sub"]?.stringValue == SimulatedUser.grace.subject(inTeam: Self.teamB))
        #expect(try transfer.member(stranger.memberID)?.providerUserID == "001234.deleted.account")
        #expect(try transfer.transfer(stranger.memberID)?.importFailure == "invalid_request")
        #expect(try transfer.harness.userCount() == 3)

        // A sign-in with the new team's sub lands on the same member.
        let adaAgain = try transfer.signIn(.ada)
        #expect(adaAgain.memberID == ada.memberID && adaAgain.existing)

        // Run again: only the member left in place is asked about again.
        let callsBeforeImport = simulator.userMigrationCallCount
        let importAgain = try transfer.run(["import"], as: transfer.teamB)
        #expect(importAgain.status == 0, "stdout: \(importAgain.output)")
        #expect(importAgain.output.contains("transfer import: 1 members to move to team \(Self.teamB), 2 moved already"))
        #expect(simulator.userMigrationCallCount == callsBeforeImport + 1)
    }

    @Test("after the move, a sign-in whose token has a new sub and the recorded transfer_sub is the old member, before any import")
    func signInWithTransferSub() throws {
        let transfer = try Transfer(serverTeam: Self.teamB)
        let grace = try transfer.signIn(.grace)
        let export = try transfer.run(["export", "--target-team", Self.teamB], as: transfer.teamA)
        #expect(export.status == 0, "stdout: \(export.output)\nstderr: \(export.errors)")

        transfer.harness.simulator.transferApp(toTeam: Self.teamB)
        let newSub = SimulatedUser.grace.subject(inTeam: Self.teamB)
        #expect(newSub != SimulatedUser.grace.sub)
        let after = try transfer.signIn(.grace)
        #expect(after.memberID == grace.memberID)
        #expect(after.existing)
        #expect(try transfer.member(grace.memberID)?.providerUserID == newSub)
        #expect(try transfer.transfer(grace.memberID)?.newSub == newSub)
        #expect(try transfer.me(grace.accessToken)["memberId"]?.doubleValue == Double(grace.memberID))
        #expect(try transfer.harness.userCount() == 1)

        // Nothing is left for the import; it asks Apple nothing.
        let calls = transfer.harness.simulator.userMigrationCallCount
        let imported = try transfer.run(["import"], as: transfer.teamB)
        #expect(imported.status == 0, "stdout: \(imported.output)")
        #expect(imported.output.contains("transfer import: done, nothing left to move"))
        #expect(transfer.harness.simulator.userMigrationCallCount == calls)
    }

    @Test("a transfer_sub exported for another team than the server's (or with no APPLE_TEAM_ID) signs in nobody",
          arguments: [AppTransferTests.teamA, nil] as [String?])
    func transferSubForAnotherTeam(serverTeam: String?) throws {
        let transfer = try Transfer(serverTeam: serverTeam)
        let grace = try transfer.signIn(.grace)
        let export = try transfer.run(["export", "--target-team", Self.teamB], as: transfer.teamA)
        #expect(export.status == 0, "stdout: \(export.output)\nstderr: \(export.errors)")
        transfer.harness.simulator.transferApp(toTeam: Self.teamB)
        let after = try transfer.signIn(.grace)
        #expect(after.memberID != grace.memberID && !after.existing)
        #expect(try transfer.member(grace.memberID)?.providerUserID == SimulatedUser.grace.sub)
        #expect(try transfer.transfer(grace.memberID)?.newSub == nil)
    }

    @Test("a web sign-in through the simulator after the move carries transfer_sub and lands on the old member")
    func webSignInAfterMove() throws {
        let transfer = try Transfer(serverTeam: Self.teamB)
        #expect(try TestBrowser(transfer.harness).signIn(user: .alan).status == 303)
        let alan = try #require(try transfer.harness.app.store.read { try $0.user(providerUserID: SimulatedUser.alan.sub) })
        let export = try transfer.run(["export", "--target-team", Self.teamB], as: transfer.teamA)
        #expect(export.status == 0, "stdout: \(export.output)\nstderr: \(export.errors)")

        transfer.harness.simulator.transferApp(toTeam: Self.teamB)
        #expect(try TestBrowser(transfer.harness).signIn(user: .alan).status == 303)
        #expect(try transfer.harness.userCount() == 1)
        #expect(try transfer.member(Int(alan.id))?.providerUserID == SimulatedUser.alan.subject(inTeam: Self.teamB))
    }

    @Test("bad input: no or malformed team ID, the own team, no Apple key, import before any export — one clear line, non-zero")
    func badInput() throws {
        let transfer = try Transfer()
        _ = try transfer.signIn(.ada)
        let cases: [([String], TeamKey?, Int32, String)] = [
            (["export"], transfer.teamA, 2, "transfer export needs --target-team TEAMID"),
            (["export", "--target-team", "teamb"], transfer.teamA, 2, "--target-team must be the recipient's 10-character Team ID"),
            (["export", "--target-team", Self.teamA], transfer.teamA, 2, "is this team's own ID (APPLE_TEAM_ID)"),
            (["export", "--target-team", Self.teamB], nil, 2, "APPLE_TEAM_ID, APPLE_KEY_ID and APPLE_PRIVATE_KEY_PATH are needed"),
            (["import"], nil, 2, "APPLE_TEAM_ID, APPLE_KEY_ID and APPLE_PRIVATE_KEY_PATH are needed"),
            (["rename"], transfer.teamA, 2, "usage: apple-signin-bridge transfer export --target-team TEAMID"),
            (["import"], transfer.teamB, 1, "no transfer identifier is recorded for team \(Self.teamB)"),
        ]
        for (arguments, team, status, message) in cases {
            var environment = transfer.environment(team ?? transfer.teamA)
            if team == nil { ["APPLE_TEAM_ID", "APPLE_KEY_ID", "APPLE_PRIVATE_KEY_PATH"].forEach { environment[$0] = nil } }
            let result = try RunningProcess(["transfer"] + arguments, environment: environment).wait()
            #expect(result.status == status, "\(arguments): stdout \(result.output) stderr \(result.errors)")
            #expect((result.errors + result.output).contains(message), "\(arguments): \(result.errors) \(result.output)")
        }
        #expect(try transfer.harness.app.store.read { try $0.transferCounts(targetTeam: nil) }.exported == 0)
    }
}
