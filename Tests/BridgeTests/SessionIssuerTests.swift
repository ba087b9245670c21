@testable import Bridge
import BridgeMetrics
import Foundation
import HTTPServer
import Logging
import SignIn
import Storage
import Synchronization
import Testing

/// Opening sessions and rotating their refresh tokens, inside real SQLite writes: no listener, no HTTP.
@Suite("Sessions and refresh-token rotation without sockets")
struct SessionIssuerTests {
    struct OtherHolder: Error, Equatable {}

    final class LoggedLines: Sendable {
        let lines = Mutex<[String]>([])
        var all: [String] { lines.withLock { $0 } }
    }

    final class Fixture {
        let directory: String
        let store: any Store
        let metrics = Metrics()
        let logged = LoggedLines()
        let issuer: SessionIssuer
        /// Whole seconds, as the store keeps times.
        let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("sessions-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            store = try StoreFactory.open("sqlite:\(directory)/sessions.sqlite3")
            _ = try store.migrate()
            issuer = SessionIssuer(metrics: metrics, logger: Logger { [logged] line in logged.lines.withLock { $0.append(line) } })
        }

        deinit { try? FileManager.default.removeItem(atPath: directory) }

        /// A user with an app session (or, given `client`, an OpenID client's: with its grant); returns the
        /// session and its first refresh token.
        func open(client: String? = nil, refreshToken: Bool = true) throws -> SessionIssuer.OpenedSession {
            let new = SessionIssuer.newSession(withRefreshToken: refreshToken)
            let (issuer, now) = (issuer, now)
            return try store.write { transaction in
                let profile = AppleUserProfile(sub: "001234.sessions", email: nil, emailVerified: false, isPrivateEmail: false,
                                               displayName: nil)
                let user = try transaction.upsertAppleUser(profile, now: now).user
                let opened = try issuer.open(new, userID: user.id, flow: client == nil ? "api" : "openid", nonceVerified: true,
                                             in: transaction, now: now)
                if let client, let familyID = opened.refresh?.familyID {
                    try transaction.insertProviderGrant(ProviderGrant(familyID: familyID, clientID: client, userID: user.id,
                                                                      scope: "openid email", authTime: now, createdAt: now))
                }
                return opened
            }
        }

        /// `presented` rotated in a write of its own, as the JSON API and the token endpoint do.
        func rotate(_ presented: String, by holder: SessionIssuer.Holder = .app,
                    after seconds: TimeInterval = 0) throws -> SessionIssuer.Rotation {
            let presentation = SessionIssuer.presentation(of: presented, by: holder, now: now.addingTimeInterval(seconds))
            let issuer = issuer
            return try store.write { try issuer.rotate(presentation, in: $0, refusingAnotherHoldersWith: OtherHolder()) }
        }

        func session(_ idHash: String) throws -> Session? {
            let now = now
            return try store.read { try $0.session(idHash: idHash, now: now)?.session }
        }
    }

    /// The replacement token of a rotation, or nil (recorded as an issue) for any other outcome.
    static func replacement(_ rotation: SessionIssuer.Rotation) -> String? {
        guard case let .rotated(_, _, refreshToken, _) = rotation else {
            Issue.record("expected a rotation, got \(rotation)")
            return nil
        }
        return refreshToken
    }

    @Test("a session with a refresh token lives 30 days, a browser's a week; only the first has a token")
    func opening() throws {
        let fixture = try Fixture()
        let app = try fixture.open()
        #expect(app.refresh != nil)
        #expect(try fixture.session(app.sessionIDHash)?.expiresAt == fixture.now.addingTimeInterval(SessionIssuer.appSessionLifetime))
        #expect(app.sessionIDHash == SecretTokens.digest(app.sessionID))
        let browser = try fixture.open(refreshToken: false)
        #expect(browser.refresh == nil)
        #expect(try fixture.session(browser.sessionIDHash)?.expiresAt
            == fixture.now.addingTimeInterval(SessionIssuer.browserSessionLifetime))
    }

    @Test("a refresh token rotates once: its replacement rotates in turn, in the same session")
    func rotationOnce() throws {
        let fixture = try Fixture()
        let opened = try fixture.open()
        let first = try #require(opened.refresh?.token)
        let rotation = try fixture.rotate(first)
        guard case let .rotated(user, sessionIDHash, second, grant) = rotation else {
            Issue.record("expected a rotation, got \(rotation)")
            return
        }
        #expect(user.providerUserID == "001234.sessions")
        #expect(sessionIDHash == opened.sessionIDHash)
        #expect(grant == nil)
        #expect(second != first)
        let third = try #require(Self.replacement(try fixture.rotate(second)))
        #expect(third != second)
        #expect(fixture.metrics.value("bridge_refresh_reuse_total") == 0)
    }

    @Test("a token presented twice revokes its family: the session ends and the replacement stops working")
    func reuseRevokesFamily() throws {
        let fixture = try Fixture()
        let opened = try fixture.open()
        let first = try #require(opened.refresh?.token)
        let second = try #require(Self.replacement(try fixture.rotate(first)))
        guard case .reused = try fixture.rotate(first) else {
            Issue.record("the second presentation was not seen as a reuse")
            return
        }
        #expect(try fixture.session(opened.sessionIDHash) == nil)
        guard case .reused = try fixture.rotate(second) else {
            Issue.record("the revoked family's replacement still works")
            return
        }
        // Counted only when the caller says so, once the write returned (a write may run twice).
        #expect(fixture.metrics.value("bridge_refresh_reuse_total") == 0)
        fixture.issuer.recordReuse(flow: "openid")
        #expect(fixture.metrics.value("bridge_refresh_reuse_total") == 1)
        let logged = fixture.logged.all
        #expect(logged.contains { $0.contains("refresh_token_reused") && $0.contains("flow=openid") })
        #expect(!logged.contains { $0.contains(first) || $0.contains(second) })
    }

    @Test("a token issued to another holder is refused and its rotation undone; its own holder can still use it")
    func anotherHoldersToken() throws {
        let fixture = try Fixture()
        let clients = try #require(try fixture.open(client: "client-a").refresh?.token)
        #expect(throws: OtherHolder()) { try fixture.rotate(clients, by: .client(id: "client-b")) }
        #expect(throws: OtherHolder()) { try fixture.rotate(clients, by: .app) }
        guard case let .rotated(_, _, _, grant) = try fixture.rotate(clients, by: .client(id: "client-a")) else {
            Issue.record("the refusals spent the client's token")
            return
        }
        #expect(grant?.clientID == "client-a")
        #expect(grant?.scope == "openid email")

        let apps = try #require(try fixture.open().refresh?.token)
        #expect(throws: OtherHolder()) { try fixture.rotate(apps, by: .client(id: "client-a")) }
        #expect(Self.replacement(try fixture.rotate(apps, by: .app)) != nil)
    }

    @Test("the token of an expired session is expired; an unknown token is too, and neither counts as reuse")
    func expiredSession() throws {
        let fixture = try Fixture()
        let token = try #require(try fixture.open().refresh?.token)
        guard case .expiredOrUnknown = try fixture.rotate(token, after: SessionIssuer.appSessionLifetime + 1) else {
            Issue.record("an expired session's token rotated")
            return
        }
        guard case .expiredOrUnknown = try fixture.rotate(SecretTokens.random()) else {
            Issue.record("an unknown token rotated")
            return
        }
    }
}
