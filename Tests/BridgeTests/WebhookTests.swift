import AppleIDSimulator
import Bridge
import Foundation
import HTTPServer
import JSON
import Storage
import Synchronization
import Testing
import TestSupport
@testable import Webhooks

/// The operator's webhook endpoint on loopback: keeps every delivery, refuses the first `refusing` with 503, and
/// answers each after `delay`.
final class WebhookReceiver: Sendable {
    struct Delivery: Sendable {
        let id: String
        let timestamp: String
        let signature: String
        let body: [UInt8]
        var json: JSONValue { (try? JSONValue.parse(body)) ?? .null }
        var type: String? { json["type"]?.stringValue }
        var data: JSONValue { json["data"] ?? .null }
    }

    let secret = WebhookSecret.generate()
    private let state: ReceiverState
    private let listener: MicroHTTPDListener
    var url: String { "http://127.0.0.1:\(listener.port)/hooks/bridge" }

    /// The listener's handler holds only the state, never the receiver: were it to hold the receiver while a test
    /// let go of it, the receiver's deinit would stop the listener from the listener's own thread, and
    /// libmicrohttpd aborts the process ("Failed to join a thread").
    init(refusing: Int = 0, delay: TimeInterval = 0) throws {
        let state = ReceiverState(refusing: refusing, delay: delay)
        self.state = state
        listener = MicroHTTPDListener(configuration: ServerConfiguration(host: "127.0.0.1", port: 0),
                                      responder: ClosureResponder { request in state.receive(request) },
                                      logger: .silent)
        try listener.start()
    }

    deinit { listener.shutdown(quiescing: false) }

    /// The settings that send every event here.
    func settings(events: String? = nil) -> [String: String] {
        var settings = ["BRIDGE_WEBHOOK_URL": url, "BRIDGE_WEBHOOK_SECRET": secret]
        if let events { settings["BRIDGE_WEBHOOK_EVENTS"] = events }
        return settings
    }

    var deliveries: [Delivery] { state.received.withLock { $0 } }

    /// Waits until `count` deliveries arrived; each must carry a valid signature of its id, timestamp and body.
    @discardableResult
    func await(_ count: Int, timeout: TimeInterval = 20) throws -> [Delivery] {
        let deadline = Date().addingTimeInterval(timeout)
        while deliveries.count < count {
            if Date() > deadline { throw TestFailure("\(deliveries.count) of \(count) webhook deliveries arrived: \(deliveries.map { $0.type ?? "?" })") }
            Thread.sleep(forTimeInterval: 0.05)
        }
        let all = deliveries
        let key = try #require(WebhookSecret(secret))
        for delivery in all {
            #expect(delivery.id.hasPrefix("msg_"))
            let timestamp = try #require(Int64(delivery.timestamp))
            #expect(abs(Double(timestamp) - Date().timeIntervalSince1970) < 300)
            #expect(delivery.signature == key.signature(messageID: delivery.id, timestamp: timestamp, body: delivery.body))
        }
        return all
    }
}

/// What the receiver's listener thread touches: the deliveries so far and how to answer the next.
private final class ReceiverState: Sendable {
    let received = Mutex<[WebhookReceiver.Delivery]>([])
    private let refusals: Mutex<Int>
    private let delay: TimeInterval

    init(refusing: Int, delay: TimeInterval) {
        refusals = Mutex(refusing)
        self.delay = delay
    }

    func receive(_ request: Request) -> Response {
        let delivery = WebhookReceiver.Delivery(
            id: request.headers["webhook-id"] ?? "", timestamp: request.headers["webhook-timestamp"] ?? "",
            signature: request.headers["webhook-signature"] ?? "", body: request.body)
        received.withLock { $0.append(delivery) }
        if delay > 0 { Thread.sleep(forTimeInterval: delay) }
        let refuse = refusals.withLock { left -> Bool in
            defer { left = max(0, left - 1) }
            return left > 0
        }
        return refuse ? .text("busy\n", status: 503) : Response(status: 204)
    }
}

@Suite("Webhooks to the operator's backend", .serialized)
struct WebhookTests {
    @Test("a first sign-in sends member.created, the next member.signed_in, each with the flow; a deletion member.deleted")
    func signInAndDeletion() throws {
        let receiver = try WebhookReceiver()
        let harness = try BridgeHarness(receiver.settings())
        #expect(try TestBrowser(harness).signIn(user: .ada).status == 303)
        let created = try receiver.await(1)[0]
        #expect(created.type == "member.created")
        #expect(created.data == ["memberId": 1, "flow": "web"])
        #expect(created.json["timestamp"]?.stringValue?.hasSuffix("Z") == true)

        let token = try harness.token(audience: BridgeHarness.bundleID, subject: SimulatedUser.ada.sub, nonce: nil)
        let signIn = try harness.api("/api/auth/apple", json: harness.json(["idToken": .string(token)]))
        #expect(signIn.status == 200)
        let signedIn = try receiver.await(2)[1]
        #expect(signedIn.type == "member.signed_in")
        #expect(signedIn.data == ["memberId": 1, "flow": "api"])
        // Nothing secret in a body: not the identity token, not the tokens the app got.
        let access = try #require(signIn.body["accessToken"]?.stringValue)
        let refresh = try #require(signIn.body["refreshToken"]?.stringValue)
        for delivery in receiver.deliveries {
            let body = String(decoding: delivery.body, as: UTF8.self)
            #expect(!body.contains(token) && !body.contains(access) && !body.contains(refresh))
        }

        #expect(try harness.api("/api/me", method: "DELETE", bearer: access).status == 200)
        let deleted = try receiver.await(3)[2]
        #expect(deleted.type == "member.deleted")
        #expect(deleted.data == ["memberId": 1, "requestedBy": "member", "appleRevocation": "none"])
        #expect(Set(receiver.deliveries.map(\.id)).count == 3)
        #expect(try harness.app.store.read { try $0.webhookBacklog() } == WebhookBacklog(pending: 0, failed: 0, oldestPendingCreatedAt: nil))
    }

    @Test("Apple's notifications send apple.consent_revoked, apple.email_disabled, apple.email_enabled and member.deleted by Apple")
    func appleNotifications() throws {
        let receiver = try WebhookReceiver()
        let harness = try BridgeHarness(receiver.settings())
        #expect(try TestBrowser(harness).signIn(user: .grace).status == 303)
        try receiver.await(1)
        let sub = SimulatedUser.grace.sub
        for type in ["consent-revoked", "email-disabled", "email-enabled", "account-delete"] {
            let body = try harness.simulator.mintNotification(type: type, subject: sub, audience: BridgeHarness.servicesID)
            #expect(try harness.api("/apple/notifications", json: body).status == 200)
        }
        let all = try receiver.await(5)
        let byType = Dictionary(all.map { ($0.type ?? "", $0.data) }) { first, _ in first }
        #expect(byType["apple.consent_revoked"] == ["memberId": 1])
        #expect(byType["apple.email_disabled"] == ["memberId": 1])
        #expect(byType["apple.email_enabled"] == ["memberId": 1])
        #expect(byType["member.deleted"] == ["memberId": 1, "requestedBy": "apple", "appleRevocation": "none"])
    }

    @Test("BRIDGE_WEBHOOK_EVENTS: events it leaves out are not even written to the outbox")
    func filtered() throws {
        let receiver = try WebhookReceiver()
        let harness = try BridgeHarness(receiver.settings(events: "member.deleted"))
        let browser = TestBrowser(harness)
        #expect(try browser.signIn(user: .alan).status == 303)
        #expect(try harness.app.store.read { try $0.webhookEvents(failedOnly: false, limit: 10) } == [])
        let body = try harness.simulator.mintNotification(type: "account-delete", subject: SimulatedUser.alan.sub,
                                                          audience: BridgeHarness.servicesID)
        #expect(try harness.api("/apple/notifications", json: body).status == 200)
        #expect(try receiver.await(1).map(\.type) == ["member.deleted"])
        Thread.sleep(forTimeInterval: 1.5)
        #expect(receiver.deliveries.count == 1)
    }

    @Test("a refused delivery is tried again within seconds under the same webhook-id, and counted")
    func refusedThenRetried() throws {
        let receiver = try WebhookReceiver(refusing: 1)
        let harness = try BridgeHarness(receiver.settings())
        #expect(try TestBrowser(harness).signIn(user: .ada).status == 303)
        let start = Date()
        let both = try receiver.await(2)
        #expect(Date().timeIntervalSince(start) < 10)
        #expect(both[0].id == both[1].id)
        #expect(both[0].body == both[1].body)
        let metrics = String(decoding: try harness.request(path: "/metrics").body, as: UTF8.self)
        #expect(metrics.contains(#"bridge_webhook_deliveries_total{result="retrying"} 1"#))
        #expect(metrics.contains(#"bridge_webhook_deliveries_total{result="delivered"} 1"#))
        #expect(metrics.contains("bridge_webhook_events_pending "))
        #expect(metrics.contains("bridge_webhook_oldest_pending_age_seconds "))
    }

    @Test("a receiver that takes seconds to answer does not slow the sign-ins; their events arrive when it answers")
    func slowReceiver() throws {
        let receiver = try WebhookReceiver(delay: 5)
        let harness = try BridgeHarness(receiver.settings())
        for user in [SimulatedUser.ada, .grace, .alan] {
            let start = Date()
            #expect(try TestBrowser(harness).signIn(user: user).status == 303)
            #expect(Date().timeIntervalSince(start) < 4, "a sign-in waited on the webhook receiver")
        }
        #expect(try receiver.await(3).map(\.type) == ["member.created", "member.created", "member.created"])
    }

    @Test("an event that keeps failing past its days of retries is marked failed; webhooks retry sends it again")
    func givenUpThenRetried() throws {
        let receiver = try WebhookReceiver(refusing: 1)
        // No worker of the server's own: this test makes each pass itself.
        let harness = try BridgeHarness()
        let store = harness.app.store
        let delivery = WebhookDelivery(store: StoreAccess(store) { $0 }, url: try #require(URL(string: receiver.url)),
                                       secret: try #require(WebhookSecret(receiver.secret)), transport: URLSessionWebhookTransport())
        try store.write { tx in
            try WebhookEvents(events: [.memberCreated]).record(.memberCreated, memberID: 7, ["flow": "web"], in: tx,
                                                               now: Date().addingTimeInterval(-WebhookEvents.retention - 60))
        }
        #expect(delivery.deliverDue() == 1)
        #expect(try store.read { try $0.webhookBacklog() }.failed == 1)
        #expect(delivery.deliverDue() == 0)
        #expect(try store.write { try $0.retryWebhookEvents(now: Date(), giveUpAt: Date().addingTimeInterval(60)) } == 1)
        #expect(delivery.deliverDue() == 1)
        let both = try receiver.await(2)
        #expect(both[0].id == both[1].id)
        #expect(try store.read { try $0.webhookBacklog() } == WebhookBacklog(pending: 0, failed: 0, oldestPendingCreatedAt: nil))
    }

    @Test("members delete sends member.deleted, requested by the operator, from the command's own process")
    func operatorDeletion() throws {
        let receiver = try WebhookReceiver()
        let secretKey = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        let harness = try BridgeHarness(receiver.settings().merging(["BRIDGE_SECRET_KEY": secretKey]) { _, new in new })
        #expect(try TestBrowser(harness).signIn(user: .alan).status == 303)
        try receiver.await(1)
        let environment = receiver.settings().merging([
            "BRIDGE_DATABASE": "sqlite:\(harness.databasePath)", "BRIDGE_SECRET_KEY": secretKey,
            "APPLE_SERVICES_ID": BridgeHarness.servicesID, "APPLE_ID_URL": "http://127.0.0.1:\(harness.simulatorPort)",
        ]) { _, new in new }
        let deleted = try RunningProcess(["members", "delete", "--id", "1", "--yes"], environment: environment).wait()
        #expect(deleted.status == 0, "stderr: \(deleted.errors)")
        let event = try receiver.await(2)[1]
        #expect(event.type == "member.deleted")
        #expect(event.data == ["memberId": 1, "requestedBy": "operator", "appleRevocation": "none"])
    }

    @Test("a bad webhook setting stops start-up with one line naming its key; no setting, no webhooks")
    func configuration() throws {
        let secret = WebhookSecret.generate()
        #expect(configurationProblem(["BRIDGE_WEBHOOK_URL": "http://backend.example.com/hook", "BRIDGE_WEBHOOK_SECRET": secret])?.key
                == "BRIDGE_WEBHOOK_URL")
        #expect(configurationProblem(["BRIDGE_WEBHOOK_URL": "https://backend.example.com/hook"])?.key == "BRIDGE_WEBHOOK_SECRET")
        let weak = configurationProblem(["BRIDGE_WEBHOOK_URL": "https://backend.example.com/hook", "BRIDGE_WEBHOOK_SECRET": "whsec_c2hvcnQ="])
        #expect(weak?.key == "BRIDGE_WEBHOOK_SECRET")
        #expect(weak?.description.contains("c2hvcnQ") == false)
        #expect(configurationProblem(["BRIDGE_WEBHOOK_URL": "https://backend.example.com/hook", "BRIDGE_WEBHOOK_SECRET": secret,
                                      "BRIDGE_WEBHOOK_EVENTS": "member.created,member.renamed"])?.key == "BRIDGE_WEBHOOK_EVENTS")
        #expect(configurationProblem(["BRIDGE_WEBHOOK_SECRET": secret])?.key == "BRIDGE_WEBHOOK_URL")
        #expect(configurationProblem(["BRIDGE_WEBHOOK_URL": "https://backend.example.com/hook", "BRIDGE_WEBHOOK_SECRET": secret]) == nil)
        #expect(try BridgeHarness().app.webhookDelivery == nil)
    }
}

extension PostgresServerTests {
    @Test("webhooks on PostgreSQL with two instances: the sign-ins' and a deletion's events, each delivered once")
    func webhooksOnPostgres() throws {
        try withDatabase { url in
            let receiver = try WebhookReceiver()
            var settings = receiver.settings()
            settings["BRIDGE_DATABASE"] = url
            // Both instances open the provider's signing key sealed under this key.
            settings["BRIDGE_SECRET_KEY"] = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
            let a = try BridgeHarness(settings)
            let b = try BridgeHarness(settings)
            #expect(try TestBrowser(a).signIn(user: .ada).status == 303)
            #expect(try TestBrowser(b).signIn(user: .grace).status == 303)
            let token = try b.token(audience: BridgeHarness.bundleID, subject: SimulatedUser.ada.sub, nonce: nil)
            let signIn = try b.api("/api/auth/apple", json: b.json(["idToken": .string(token)]))
            #expect(signIn.status == 200)
            #expect(try b.api("/api/me", method: "DELETE", bearer: signIn.body["accessToken"]?.stringValue).status == 200)
            let all = try receiver.await(4)
            Thread.sleep(forTimeInterval: 1.5)
            #expect(receiver.deliveries.count == 4)
            #expect(Set(all.map(\.id)).count == 4)
            #expect(all.map { $0.type ?? "" }.sorted() == ["member.created", "member.created", "member.deleted", "member.signed_in"])
        }
    }

    @Test("webhooks on PostgreSQL: sign-ins sharing a commit each write their member.created (the batch is not coalesced, and nothing is lost)")
    func webhooksWithConcurrentSignInsOnPostgres() throws {
        try withDatabase { url in
            let receiver = try WebhookReceiver()
            let harness = try BridgeHarness(receiver.settings().merging(["BRIDGE_DATABASE": url]) { _, new in new })
            let tokens = try (0..<12).map { index in
                try harness.token(audience: BridgeHarness.bundleID, subject: "001234.concurrent.\(index)", nonce: nil)
            }
            let statuses = Mutex<[Int]>([])
            DispatchQueue.concurrentPerform(iterations: tokens.count) { index in
                let status = (try? harness.api("/api/auth/apple", json: harness.json(["idToken": .string(tokens[index])])).status) ?? 0
                statuses.withLock { $0.append(status) }
            }
            #expect(statuses.withLock { $0 } == Array(repeating: 200, count: tokens.count))
            let all = try receiver.await(tokens.count)
            #expect(Set(all.map(\.type)) == ["member.created"])
            let members = try harness.app.store.read { tx in try (0..<tokens.count).compactMap { try tx.user(providerUserID: "001234.concurrent.\($0)")?.id } }
            #expect(Set(all.compactMap { $0.data["memberId"]?.int64Value }) == Set(members))
            #expect(members.count == tokens.count)
        }
    }
}
