import AppleIDSimulator
import Bridge
import Foundation
import HTTPServer
import JSON
import OpenIDProvider
@testable import Storage
import Synchronization
import Testing
import TestSupport

/// Holds the database writer inside a write until released (or for 5 s at most, so a server that does wait on
/// the writer fails the test instead of hanging it), as a slow disk or a long checkpoint would.
final class StalledWriter: Sendable {
    private let entered = DispatchSemaphore(value: 0)
    private let gate = DispatchSemaphore(value: 0)

    init(_ store: any Store) {
        let (entered, gate) = (entered, gate)
        Thread { try? store.write { _ in entered.signal(); _ = gate.wait(timeout: .now() + 5) } }.start()
        entered.wait()
    }

    func release() { gate.signal() }
}

/// A browser back from Apple, with the fields to post; used by one thread only.
struct PreparedCallback: @unchecked Sendable {
    let browser: TestBrowser
    let fields: [(String, String)]
}

@Suite("A stalled database writer", .serialized)
struct WriterStallTests {
    /// Once `count` requests are in flight (waiting for the writer), `/healthz` still answers at once.
    static func expectHealthyWhile(inFlight count: Int, on harness: BridgeHarness) throws {
        let deadline = Date() + 10
        while harness.server.http.inFlightRequests < count, Date() < deadline { usleep(1_000) }
        #expect(harness.server.http.inFlightRequests == count)
        let health = try timings(40) {
            let response = try harness.request(path: "/healthz")
            if response.status != 200 { throw TestFailure("healthz answered \(response.status)") }
        }
        #expect(percentile(health, 0.99) < 250, "/healthz p99 \(percentile(health, 0.99)) ms while the writer was stalled")
    }

    /// A person signed in on the web who has asked to delete their account: their browser, and the confirmation
    /// form's fields to post.
    static func aboutToDeleteAccount(_ user: SimulatedUser, on harness: BridgeHarness) throws -> (TestBrowser, [(String, String)]) {
        let browser = TestBrowser(harness)
        #expect(try browser.signIn(user: user).status == 303)
        let session = HTMLDocument(try browser.get("/session").text)
        let csrf = try #require(session.formFields("//form[@action='/account/delete']").first { $0.name == "csrf" }?.value)
        let confirmation = try browser.post("/account/delete", form: [("csrf", csrf)])
        let fields = HTMLDocument(confirmation.text).formFields("//form[@action='/account/delete']").map { ($0.name, $0.value) }
        #expect(fields.value("confirm") == "yes")
        return (browser, fields)
    }

    /// A browser that started at the OpenID provider's authorization endpoint and is back from Apple, with the
    /// callback to post.
    static func backFromApple(_ user: SimulatedUser, through party: RelyingParty, cancel: Bool = false) throws -> PreparedCallback {
        let browser = TestBrowser(party.harness)
        let login = try browser.openLogin(party.authorizePath())
        return PreparedCallback(browser: browser, fields: try browser.authorizeAtApple(login, user: user, cancel: cancel))
    }

    @Test("an OpenID sign-in that finishes while the same person deletes their account hands the client a code that the deletion then took away, not an error page")
    func openIDSignInDuringItsOwnAccountDeletion() throws {
        let party = try RelyingParty()
        let harness = party.harness
        let store = try #require(harness.app.store as? SQLiteStore)
        let (webUser, confirmFields) = try Self.aboutToDeleteAccount(.ada, on: harness)
        let oidcSignIn = try Self.backFromApple(.ada, through: party)

        // The sign-in reaches the writer's queue first, the deletion second: both commit in the next batch.
        let writer = StalledWriter(harness.app.store)
        let group = DispatchGroup()
        let answers = Mutex<[String: RawHTTPResponse]>([:])
        func send(_ name: String, _ request: @escaping @Sendable () throws -> RawHTTPResponse) {
            inThread(group) {
                guard let response = try? request() else { return }
                answers.withLock { $0[name] = response }
            }
        }
        func waitForQueuedWrites(_ count: Int) {
            let deadline = Date() + 10
            while store.waitingWriterCount < count, Date() < deadline { usleep(1_000) }
        }
        send("oidc sign-in") { try oidcSignIn.browser.post("/apple_redirect", form: oidcSignIn.fields) }
        waitForQueuedWrites(1)
        let deletion = PreparedCallback(browser: webUser, fields: confirmFields)
        send("web deletion") { try deletion.browser.post("/account/delete", form: deletion.fields) }
        waitForQueuedWrites(2)
        #expect(store.waitingWriterCount == 2)
        writer.release()
        group.wait()

        let answered = answers.withLock { $0 }
        #expect(answered["web deletion"]?.status == 200)
        let toClient = try #require(answered["oidc sign-in"])
        #expect(toClient.status == 303, "the sign-in answered \(toClient.status)")
        let code = try #require(RelyingParty.parameters(toClient)["code"])
        // The account, and the code with it, were deleted after the sign-in committed.
        #expect(try party.redeem(code).body["error"] == "invalid_grant")
        #expect(try webUser.get("/session").status == 303)
        #expect(try oidcSignIn.browser.get("/session").status == 303)
    }

    @Test("with one listener thread and the writer stalled, waiting sign-ins, sign-outs, login pages and API calls do not hold it: /healthz answers, and each then completes")
    func waitingWritesFreeTheListener() throws {
        var listener = ServerConfiguration()
        listener.threadPoolSize = 1
        let harness = try BridgeHarness(listener: listener, listening: true)
        let browsers = (0..<4).map { _ in TestBrowser(harness) }
        let callbacks = try browsers.map { browser in try browser.authorizeAtApple(try browser.openLogin()) }
        let port = harness.port
        // A person signed in on the web, and an app, both about to sign out.
        let leaving = TestBrowser(harness)
        #expect(try leaving.signIn().status == 303)
        let csrf = try #require(HTMLDocument(try leaving.get("/session").text)
            .formFields("//form[@action='/logout']").first { $0.name == "csrf" }?.value)
        let nonce = try #require(try harness.api("/api/auth/nonce").body["nonce"]?.stringValue)
        let appToken = try harness.token(audience: BridgeHarness.bundleID, subject: "001234.leaving.app", nonce: nonce)
        let app = try harness.api("/api/auth/apple", json: harness.json(["idToken": .string(appToken), "nonce": .string(nonce)]))
        let access = try #require(app.body["accessToken"]?.stringValue)

        let writer = StalledWriter(harness.app.store)
        let group = DispatchGroup()
        let signIns = Mutex<[(status: Int, browser: Int)]>([])
        for (index, browser) in browsers.enumerated() {
            let signIn = PreparedCallback(browser: browser, fields: callbacks[index])
            inThread(group) {
                let status = (try? signIn.browser.post("/apple_redirect", form: signIn.fields).status) ?? 0
                signIns.withLock { $0.append((status, index)) }
            }
        }
        let loginPages = Mutex<[Int]>([])
        let nonces = Mutex<[String]>([])
        for _ in 0..<2 {
            inThread(group) {
                let status = (try? RawHTTPClient.request(port: port, path: "/login").status) ?? 0
                loginPages.withLock { $0.append(status) }
            }
            inThread(group) {
                let issued = try? harness.api("/api/auth/nonce")
                nonces.withLock { $0.append(issued?.body["nonce"]?.stringValue ?? "status \(issued?.status ?? 0)") }
            }
        }
        let signOuts = Mutex<[String]>([])
        let signOut = PreparedCallback(browser: leaving, fields: [("csrf", csrf)])
        inThread(group) {
            let status = (try? signOut.browser.post("/logout", form: signOut.fields).status) ?? 0
            signOuts.withLock { $0.append("web \(status)") }
        }
        inThread(group) {
            let status = (try? harness.api("/api/auth/logout", bearer: access).status) ?? 0
            signOuts.withLock { $0.append("api \(status)") }
        }
        try Self.expectHealthyWhile(inFlight: 10, on: harness)
        #expect(signIns.withLock { $0.isEmpty } && loginPages.withLock { $0.isEmpty } && nonces.withLock { $0.isEmpty }
                    && signOuts.withLock { $0.isEmpty },
                "nothing that writes was answered before the writer was free")

        writer.release()
        group.wait()
        #expect(signIns.withLock { $0.map(\.status) } == [303, 303, 303, 303])
        for browser in browsers { #expect(try browser.get("/session").status == 200) }
        #expect(loginPages.withLock { $0 } == [200, 200])
        #expect(signOuts.withLock { $0.sorted() } == ["api 204", "web 303"])
        #expect(try leaving.get("/session").status == 303)  // signed out: back to the login page
        #expect(try harness.api("/api/me", method: "GET", bearer: access).status == 401)
        let issued = nonces.withLock { $0 }
        #expect(issued.count == 2 && issued.allSatisfy { $0.hasPrefix("asb.") }, "\(issued)")
        // A nonce issued while the writer was stalled was stored: an app signs in with it.
        let token = try harness.token(audience: BridgeHarness.bundleID, subject: "001234.stalled.app", nonce: issued[0])
        let signedIn = try harness.api("/api/auth/apple", json: harness.json(["idToken": .string(token), "nonce": .string(issued[0])]))
        #expect(signedIn.status == 200)
        #expect(signedIn.body["refreshToken"]?.stringValue?.isEmpty == false)
    }

    @Test("with one listener thread and the writer stalled, account deletions, an Apple notification and the OpenID provider's authorize, callbacks and revocation wait without holding it, then complete")
    func rarerWritesFreeTheListener() throws {
        var listener = ServerConfiguration()
        listener.threadPoolSize = 1
        let party = try RelyingParty(listener: listener, listening: true)
        let harness = party.harness
        let port = harness.port
        // Prepared before the stall: a person on the web and an app user, both about to delete their accounts;
        // a user whom Apple's notification concerns; OpenID sign-ins back from Apple (one cancelled); tokens to revoke.
        // Each is a different person: a sign-in finishing while its own account is deleted is another test's matter.
        let (webUser, confirmFields) = try Self.aboutToDeleteAccount(.alan, on: harness)
        let appToken = try harness.token(audience: BridgeHarness.bundleID, subject: "001234.deleting.app", nonce: nil)
        let app = try harness.api("/api/auth/apple", json: harness.json(["idToken": .string(appToken)]))
        let access = try #require(app.body["accessToken"]?.stringValue)
        let notified = TestBrowser(harness)
        #expect(try notified.signIn(user: .grace).status == 303)
        let notification = try harness.simulator.mintNotification(type: "consent-revoked", subject: SimulatedUser.grace.sub,
                                                                  audience: BridgeHarness.servicesID)
        let oidcSignIn = try Self.backFromApple(.ada, through: party)
        let oidcCancel = try Self.backFromApple(.ada, through: party, cancel: true)
        let refresh = try #require(try party.redeem(try party.code()).body["refresh_token"]?.stringValue)

        let writer = StalledWriter(harness.app.store)
        let group = DispatchGroup()
        let answers = Mutex<[String: RawHTTPResponse]>([:])
        func send(_ name: String, _ request: @escaping @Sendable () throws -> RawHTTPResponse) {
            inThread(group) {
                guard let response = try? request() else { return }  // a failed request stays missing below
                answers.withLock { $0[name] = response }
            }
        }
        let webDeletion = PreparedCallback(browser: webUser, fields: confirmFields)
        send("web deletion") { try webDeletion.browser.post("/account/delete", form: webDeletion.fields) }
        send("api deletion") {
            try RawHTTPClient.request(port: port, method: "DELETE", path: "/api/me", headers: [("Authorization", "Bearer \(access)")])
        }
        send("notification") {
            try RawHTTPClient.request(port: port, method: "POST", path: "/apple/notifications",
                                      headers: [("Content-Type", "application/json")], body: notification)
        }
        let authorizePath = party.authorizePath()
        send("authorize") { try RawHTTPClient.request(port: port, path: authorizePath) }
        send("oidc sign-in") { try oidcSignIn.browser.post("/apple_redirect", form: oidcSignIn.fields) }
        send("oidc cancel") { try oidcCancel.browser.post("/apple_redirect", form: oidcCancel.fields) }
        send("revoke") {
            try RawHTTPClient.request(port: port, method: "POST", path: ProviderEndpoints.revocation,
                                      headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                      body: FormFields([("token", refresh), ("client_id", RelyingParty.publicClient)]).urlEncoded)
        }
        try Self.expectHealthyWhile(inFlight: 7, on: harness)
        #expect(answers.withLock { $0.isEmpty }, "answered before the writer was free: \(answers.withLock { Array($0.keys) })")

        writer.release()
        group.wait()
        let answered = answers.withLock { $0 }
        #expect(answered["web deletion"]?.status == 200)
        #expect(try webUser.get("/session").status == 303)
        #expect(answered["api deletion"]?.status == 200)
        #expect(try harness.api("/api/me", method: "GET", bearer: access).status == 401)
        let applied = answered["notification"].flatMap { try? JSONValue.parse($0.body) }
        #expect(answered["notification"]?.status == 200 && applied?["status"]?.stringValue == "applied")
        #expect(try notified.get("/session").status == 303)  // consent revoked: signed out
        #expect(answered["authorize"]?.status == 200)
        let authorizeLink = answered["authorize"].flatMap { HTMLDocument($0.text).first("//a[@id='apple-signin']")?.attributes["href"] }
        #expect(authorizeLink?.hasPrefix("http://127.0.0.1:\(harness.simulatorPort)/") == true)
        let toClient = try #require(answered["oidc sign-in"])
        #expect(toClient.status == 303)
        let code = try #require(RelyingParty.parameters(toClient)["code"])
        #expect(try party.redeem(code).status == 200)  // the code stored while the request waited is redeemable
        let cancelled = try #require(answered["oidc cancel"])
        #expect(cancelled.status == 303 && RelyingParty.parameters(cancelled)["error"] == "access_denied")
        #expect(answered["revoke"]?.status == 200)
        let afterRevocation = try party.token([("grant_type", "refresh_token"), ("refresh_token", refresh),
                                               ("client_id", RelyingParty.publicClient)])
        #expect(afterRevocation.body["error"] == "invalid_grant")
    }
}
