@testable import Bridge
import BridgeMetrics
import BridgeSettings
import Foundation
import HTTPServer
import JSON
import Logging
import OperatorCommands
import SignIn
import Storage
import Synchronization
import Testing

/// `members find|export|delete` without the process: the command line read into a request, and each request run
/// against a real store, on SQLite and on PostgreSQL.
@Suite("Member requests", .serialized)
struct MemberRequestsTests {
    enum Backend: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, postgres
        var testDescription: String { rawValue }
    }

    @Test("a wrong command line is a usage error that says what is wrong", arguments: [
        ([], [:], "usage: apple-signin-bridge members find"),
        (["list"], [:], "unknown members action \"list\""),
        (["find", "extra"], ["sub": "s"], "takes no word \"extra\""),
        (["find"], [:], "members find needs --sub SUB or --email EMAIL"),
        (["find"], ["sub": "s", "email": "e@example.com"], "takes --sub or --email, not both"),
        (["find"], ["sub": ""], "--sub needs a value"),
        (["find"], ["id": "1"], "members find does not take --id"),
        (["export"], [:], "members export needs --id ID"),
        (["export"], ["id": "abc"], "--id must be a member id, a positive whole number"),
        (["export"], ["id": "0"], "--id must be a member id, a positive whole number"),
        (["export"], ["id": "-3"], "--id must be a member id, a positive whole number"),
        (["export"], ["id": "1", "--yes": ""], "members export does not take --yes"),
        (["delete"], ["sub": "s"], "members delete does not take --sub"),
    ] as [([String], [String: String], String)])
    func usageErrors(words: [String], options: [String: String], expected: String) {
        let error = #expect(throws: MemberRequestError.self) { try MemberRequest.parse(words: words, options: options) }
        #expect(error?.description.contains(expected) == true, "\(String(describing: error))")
    }

    @Test("a right command line is the request it names")
    func requests() throws {
        #expect(try MemberRequest.parse(words: ["find"], options: ["sub": "001.x", "config": "f"]) == .find(.sub("001.x")))
        #expect(try MemberRequest.parse(words: ["find"], options: ["email": "a@example.com"]) == .find(.email("a@example.com")))
        #expect(try MemberRequest.parse(words: ["export"], options: ["id": "42"]) == .export(memberID: 42))
        #expect(try MemberRequest.parse(words: ["delete"], options: ["id": "42"]) == .delete(memberID: 42, confirmed: false))
        #expect(try MemberRequest.parse(words: ["delete"], options: ["id": "42", "--yes": ""]) == .delete(memberID: 42, confirmed: true))
    }

    @Test("find by sub or by email (ASCII case aside) prints a JSON array of members; an unknown one exits 3",
          arguments: Backend.allCases)
    func find(backend: Backend) throws {
        try withSeededMember(backend) { fixture throws in
            let bySub = fixture.run(.find(.sub(Seed.sub)))
            #expect(bySub.status == .done)
            let output = try #require(bySub.output)
            let members = try #require(try JSONValue.parse(output).arrayValue)
            #expect(members.count == 1)
            #expect(members.first?["memberId"]?.int64Value == fixture.member.id)
            #expect(members.first?["email"]?.stringValue == Seed.email)
            #expect(members.first?["displayName"]?.stringValue == "Kim Min-ji")

            // Two members share the address (Apple's email is not unique over time): both are printed.
            let other = try fixture.store.write {
                try $0.upsertAppleUser(AppleUserProfile(sub: "001.other", email: Seed.email.uppercased(), emailVerified: true,
                                                        isPrivateEmail: false, displayName: nil), now: Date()).user
            }
            let byEmail = fixture.run(.find(.email("kim@EXAMPLE.com")))
            #expect(byEmail.status == .done)
            let ids = try JSONValue.parse(#require(byEmail.output)).arrayValue?.compactMap { $0["memberId"]?.int64Value }
            #expect(ids == [fixture.member.id, other.id])

            let unknown = fixture.run(.find(.email("nobody@example.com")))
            #expect(unknown.status == .notFound)
            #expect(unknown.status.rawValue == 3)
            #expect(unknown.output == nil)
            #expect(unknown.message == "no member has that email")
            #expect(fixture.run(.find(.sub("001.nobody"))).message == "no member has that sub")
            #expect(fixture.auditLines == [
                "action=find by=sub member_id=\(fixture.member.id) outcome=found",
                "action=find by=email member_id=\(fixture.member.id),\(other.id) outcome=found",
                "action=find by=email member_id=none outcome=not_found",
                "action=find by=sub member_id=none outcome=not_found",
            ])
        }
    }

    @Test("export prints everything kept about the member as one JSON document, without a secret or a stored digest",
          arguments: Backend.allCases)
    func export(backend: Backend) throws {
        try withSeededMember(backend) { fixture throws in
            let outcome = fixture.run(.export(memberID: fixture.member.id))
            #expect(outcome.status == .done)
            let text = try #require(outcome.output)
            let document = try JSONValue.parse(text)
            #expect(document["member"]?["sub"]?.stringValue == Seed.sub)
            #expect(document["member"]?["memberId"]?.int64Value == fixture.member.id)
            let sessions = try #require(document["sessions"]?.arrayValue)
            #expect(sessions.count == 2)
            #expect(sessions.map { $0["signInFlow"]?.stringValue } == ["web", "api"])
            #expect(sessions.first?["createdAt"]?.stringValue?.hasSuffix("Z") == true)
            let families = try #require(document["refreshTokenFamilies"]?.arrayValue)
            #expect(families.count == 1)
            #expect(families.first?["session"]?.int64Value == 2)
            #expect(families.first?["status"]?.stringValue == "active")
            #expect(families.first?["tokensIssued"]?.int64Value == 1)
            #expect(families.first?["issuedTo"]?.stringValue == "the app (JSON API)")
            #expect(document["appleToken"]?["clientId"]?.stringValue == BridgeHarness.bundleID)
            #expect(document["openIDProvider"]?["grants"]?.arrayValue?.isEmpty == true)
            #expect(document["notes"]?.arrayValue?.isEmpty == false)
            for secret in fixture.secrets {
                #expect(!text.contains(secret), "the export holds a secret or a stored digest")
            }
            #expect(fixture.run(.export(memberID: fixture.member.id + 100)).status == .notFound)
            #expect(fixture.auditLines == ["action=export member_id=\(fixture.member.id) outcome=exported",
                                           "action=export member_id=\(fixture.member.id + 100) outcome=not_found"])
        }
    }

    @Test("delete without --yes deletes nothing and says what would go; with --yes it deletes as the account page does, queueing the Apple revocation Apple did not take",
          arguments: Backend.allCases)
    func delete(backend: Backend) throws {
        try withSeededMember(backend) { fixture throws in
            let id = fixture.member.id
            let unconfirmed = fixture.run(.delete(memberID: id, confirmed: false))
            #expect(unconfirmed.status == .notConfirmed)
            #expect(unconfirmed.status.rawValue == 4)
            #expect(unconfirmed.message == "not deleted: member \(id) has 2 sessions, 1 refresh-token family, "
                    + "0 OpenID provider grants, 0 authorization codes and an Apple token (revoked at Apple first). "
                    + "Deleting removes the member and all of it, as the account page does; run again with --yes to delete.")
            #expect(try fixture.store.read { try $0.user(id: id) } != nil)

            // No client key is configured here, so Apple cannot be asked now: the token goes to the revocation queue.
            let deleted = fixture.run(.delete(memberID: id, confirmed: true))
            #expect(deleted.status == .done)
            #expect(try JSONValue.parse(#require(deleted.output))
                    == ["deleted": true, "memberId": .integer(id), "appleRevocation": "queued"])
            #expect(try fixture.store.read { try $0.user(id: id) } == nil)
            #expect(try fixture.store.read { try $0.sessions(userID: id) }.isEmpty)
            #expect(try fixture.store.read { try $0.pendingRevocationCount() } == 1)
            #expect(fixture.run(.find(.sub(Seed.sub))).status == .notFound)
            #expect(fixture.run(.delete(memberID: id, confirmed: true)).status == .notFound)
            #expect(try fixture.store.read { try $0.pendingRevocationCount() } == 1)
            #expect(fixture.auditLines == [
                "action=delete member_id=\(id) outcome=not_confirmed",
                "action=delete member_id=\(id) outcome=deleted apple_revocation=queued",
                "action=find by=sub member_id=none outcome=not_found",
                "action=delete member_id=\(id) outcome=not_found",
            ])
        }
    }

    @Test("a database that cannot be opened fails with exit 1, the reason, and an audit line; a missing SQLite file is not created")
    func unreachableDatabase() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("members-\(UUID().uuidString)").path
        for (database, reason) in [("sqlite:\(directory)/missing.sqlite3", "names no database"),
                                   ("postgres://bridge@127.0.0.1:9/bridge", "cannot be opened")] {
            let log = CapturedLog()
            let outcome = MemberRequests.run(.export(memberID: 7), configuration: try Seed.configuration(database: database),
                                             logger: log.logger)
            #expect(outcome.status == .failed)
            #expect(outcome.status.rawValue == 1)
            #expect(outcome.message?.hasPrefix("configuration error: BRIDGE_DATABASE \(reason)") == true, "\(outcome)")
            #expect(log.auditLines == ["action=export member_id=7 outcome=failed"])
        }
        #expect(!FileManager.default.fileExists(atPath: directory))
    }

    // MARK: - Fixture

    enum Seed {
        static let sub = "001234.member.requests"
        static let email = "kim@example.com"
        static let secretKey = Data(repeating: 9, count: 32)

        static func configuration(database: String) throws -> BridgeConfiguration {
            try BridgeConfiguration(values: [
                "BRIDGE_DATABASE": database, "BRIDGE_SECRET_KEY": secretKey.base64EncodedString(),
                "APPLE_SERVICES_ID": BridgeHarness.servicesID, "APPLE_BUNDLE_IDS": BridgeHarness.bundleID,
                // Nothing listens there: no test reaches the real Apple.
                "APPLE_ID_URL": "http://127.0.0.1:9",
            ], mode: .production)
        }
    }

    struct Fixture {
        let store: any Store
        let member: User
        /// The member's secrets and the digests they are stored under: none may appear in an export.
        let secrets: [String]
        let configuration: BridgeConfiguration
        let log: CapturedLog

        func run(_ request: MemberRequest) -> MemberRequestOutcome {
            MemberRequests.run(request, configuration: configuration, logger: log.logger)
        }

        var auditLines: [String] { log.auditLines }
    }

    /// A member with a browser session, an app session with its refresh token, and a stored Apple token, on a
    /// database of its own of `backend`.
    func withSeededMember(_ backend: Backend, _ body: (Fixture) throws -> Void) throws {
        try withDatabase(backend) { database in
            let configuration = try Seed.configuration(database: database)
            let store = try StoreFactory.open(configuration.database)
            _ = try store.migrate()
            let vault = AppleTokenVault(key: try ServerSecrets(secretKey: Array(Seed.secretKey)).appleTokenKey)
            let appleRefreshToken = "apple-refresh-\(UUID().uuidString)"
            let sealed = try vault.seal(appleRefreshToken, clientID: BridgeHarness.bundleID)
            let browser = SessionIssuer.newSession(withRefreshToken: false)
            let app = SessionIssuer.newSession(withRefreshToken: true)
            let issuer = SessionIssuer(metrics: Metrics(), logger: .silent)
            let now = Date()
            let member = try store.write { transaction in
                let user = try transaction.upsertAppleUser(AppleUserProfile(
                    sub: Seed.sub, email: Seed.email, emailVerified: true, isPrivateEmail: false, displayName: "Kim Min-ji"),
                    now: now).user
                _ = try issuer.open(browser, userID: user.id, flow: "web", nonceVerified: true, in: transaction, now: now)
                _ = try issuer.open(app, userID: user.id, flow: "api", nonceVerified: false, in: transaction, now: now + 1)
                try transaction.upsertAppleToken(AppleTokenRecord(userID: user.id, clientID: BridgeHarness.bundleID,
                                                                  encryptedRefreshToken: sealed, updatedAt: now))
                return user
            }
            let refresh = try #require(app.refresh)
            let secrets = [browser.sessionID, browser.sessionIDHash, app.sessionID, app.sessionIDHash, refresh.token,
                           refresh.hash, refresh.familyID, appleRefreshToken, Data(sealed).base64EncodedString()]
            try body(Fixture(store: store, member: member, secrets: secrets, configuration: configuration, log: CapturedLog()))
        }
    }

    func withDatabase(_ backend: Backend, _ body: (String) throws -> Void) throws {
        switch backend {
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("members-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            try body("sqlite:\(directory.path)/bridge.sqlite3")
        case .postgres:
            try PostgresServerTests().withDatabase(body)
        }
    }
}

/// The lines a logger wrote, and the `member_request` lines among them without their time and level.
final class CapturedLog: Sendable {
    private let lines = Mutex<[String]>([])

    var logger: Logger { Logger(sink: { line in self.lines.withLock { $0.append(line) } }) }

    /// Whether a line of `event` was written.
    func contains(event: String) -> Bool {
        lines.withLock { $0 }.contains { $0.contains(" event=\(event) ") || $0.hasSuffix(" event=\(event)") }
    }

    var auditLines: [String] {
        lines.withLock { $0 }.compactMap { line in
            line.range(of: " event=member_request ").map { String(line[$0.upperBound...]) }
        }
    }
}
