import AppleID
@testable import Bridge
import BridgeMetrics
import Foundation
import HTTPServer
import Logging
import SignIn
import Storage
import Testing
import TestSupport
import WebPresentation

/// `/metrics` as an operator's Prometheus reads it: every family with its HELP and TYPE from the first scrape, the
/// request and Apple latency histograms, the call guard, the revocation backlog and database errors
/// (docs/operations.md, docs/operations/).
@Suite("Operator metrics")
struct OperationsMetricsTests {
    /// The value of one series (`name` or `name{labels}`) in an exposition, nil when it is not there.
    static func sample(_ text: String, _ series: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Double($0.dropFirst(series.count + 1)) }
    }

    static func scrape(_ harness: BridgeHarness) throws -> String {
        let response = try harness.request(path: "/metrics")
        #expect(response.status == 200)
        return response.text
    }

    @Test("every described family has one HELP and one TYPE line, in name order, before any sample")
    func everyFamilyDescribed() {
        let text = Metrics().prometheusText()
        let names = MetricFamily.all.map(\.name)
        #expect(Set(names).count == names.count)
        for family in MetricFamily.all {
            #expect(text.components(separatedBy: "# HELP \(family.name) ").count == 2, "\(family.name)")
            #expect(text.contains("# TYPE \(family.name) \(family.kind.rawValue)\n"), "\(family.name)")
            #expect(family.kind != .counter || family.name.hasSuffix("_total"), "\(family.name)")
        }
        let typed = text.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.map { $0.split(separator: " ")[2] }
        #expect(typed == typed.sorted())
    }

    @Test("a histogram's buckets are cumulative up to +Inf, with sum and count; label values are escaped")
    func histogramAndEscaping() {
        let metrics = Metrics()
        for seconds in [0.003, 0.02, 0.02, 7.0, 30.0] {
            metrics.observe("bridge_http_request_duration_seconds", seconds, ["route": "/login"])
        }
        metrics.increment("bridge_oidc_tokens_issued_total", ["grant_type": "a\"b\\c\nd"])
        let text = metrics.prometheusText()
        let series = "bridge_http_request_duration_seconds"
        #expect(Self.sample(text, series + "_bucket{route=\"/login\",le=\"0.005\"}") == 1)
        #expect(Self.sample(text, series + "_bucket{route=\"/login\",le=\"0.025\"}") == 3)
        #expect(Self.sample(text, series + "_bucket{route=\"/login\",le=\"5.0\"}") == 3)
        #expect(Self.sample(text, series + "_bucket{route=\"/login\",le=\"10.0\"}") == 4)
        #expect(Self.sample(text, series + "_bucket{route=\"/login\",le=\"+Inf\"}") == 5)
        #expect(Self.sample(text, series + "_count{route=\"/login\"}") == 5)
        #expect(abs((Self.sample(text, series + "_sum{route=\"/login\"}") ?? 0) - 37.043) < 1e-9)
        #expect(metrics.observations(series, ["route": "/login"]) == 5)
        #expect(text.contains("bridge_oidc_tokens_issued_total{grant_type=\"a\\\"b\\\\c\\nd\"} 1\n"))
    }

    @Test("a series recorded without the lock from many threads at once loses nothing, and reads as observe's would")
    func lockFreeSeries() async {
        let (threads, each) = (8, 5_000)
        let values = [0.003, 0.02, 0.2, 7.0, 30.0]
        let lockFree = Metrics()
        let series = lockFree.series("bridge_http_request_duration_seconds", ["route": "/login"])
        #expect(lockFree.series("bridge_http_request_duration_seconds", ["route": "/login"]) === series)
        let idle = lockFree.series("bridge_http_request_duration_seconds", ["route": "/api/me"])
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<threads {
                group.addTask { for index in 0..<each { series.record(values[index % values.count]) } }
            }
        }
        let locked = Metrics()
        for index in 0..<(threads * each) {
            locked.observe("bridge_http_request_duration_seconds", values[index % values.count], ["route": "/login"])
        }
        let name = "bridge_http_request_duration_seconds"
        #expect(lockFree.observations(name, ["route": "/login"]) == threads * each)
        let (text, expected) = (lockFree.prometheusText(), locked.prometheusText())
        for bound in ["0.005", "0.025", "0.25", "10.0", "+Inf"] {
            let sample = name + "_bucket{route=\"/login\",le=\"\(bound)\"}"
            #expect(Self.sample(text, sample) != nil && Self.sample(text, sample) == Self.sample(expected, sample))
        }
        let sum = name + "_sum{route=\"/login\"}"
        #expect(abs((Self.sample(text, sum) ?? 0) - (Self.sample(expected, sum) ?? -1)) < 1e-6)
        // A series made but never recorded (a route no one asked for yet) is not listed.
        _ = idle
        #expect(!text.contains("route=\"/api/me\""))
    }

    @Test("label text written from the call's pairs is the text of the same labels as an array, escaping included")
    func labelTextForms() {
        #expect(Metrics.labelText([:] as KeyValuePairs<String, String>) == "")
        #expect(Metrics.labelText(["route": "/apple_redirect"]) == #"route="/apple_redirect""#)
        #expect(Metrics.labelText(["endpoint": "token", "result": "ok"]) == Metrics.labelText([("endpoint", "token"), ("result", "ok")]))
        #expect(Metrics.labelText(["reason": "a\"b\\c\nd", "x": "ü"]) == Metrics.labelText([("reason", "a\"b\\c\nd"), ("x", "ü")]))
        #expect(Metrics.labelText(["reason": "a\"b"]) == #"reason="a\"b""#)
    }

    @Test("a counter or histogram no one described is still listed, with its type and a help line saying so")
    func undescribedFamilies() {
        let metrics = Metrics()
        metrics.increment("bridge_something_new_total")
        metrics.observe("bridge_something_timed_seconds", 0.2)
        let text = metrics.prometheusText()
        #expect(text.contains("# HELP bridge_something_new_total Not described in MetricFamily.all.\n"))
        #expect(text.contains("# TYPE bridge_something_new_total counter\nbridge_something_new_total 1\n"))
        #expect(text.contains("# TYPE bridge_something_timed_seconds histogram\n"))
        #expect(Self.sample(text, "bridge_something_timed_seconds_bucket{le=\"0.25\"}") == 1)
    }

    @Test("after a web sign-in: requests timed by route (never by raw path), Apple's calls, the breakers, the backlog")
    func afterSignIn() throws {
        let harness = try BridgeHarness()
        #expect(try TestBrowser(harness).signIn().status == 303)
        _ = try harness.request(path: "/no/such/page-with-a-secret-looking-path")
        _ = try harness.request(path: "/public/no-such-file.css")
        // A request is counted when its connection has finished with it, just after the client has the answer.
        var text = try Self.scrape(harness)
        for _ in 0..<50 where Self.sample(text, "bridge_http_request_duration_seconds_count{route=\"/public/\"}") == nil {
            Thread.sleep(forTimeInterval: 0.02)
            text = try Self.scrape(harness)
        }
        #expect(Self.sample(text, "bridge_sign_ins_total{flow=\"web\"}") == 1)
        #expect((Self.sample(text, "bridge_http_request_duration_seconds_count{route=\"/login\"}") ?? 0) >= 1)
        #expect(Self.sample(text, "bridge_http_request_duration_seconds_count{route=\"/apple_redirect\"}") == 1)
        #expect(Self.sample(text, "bridge_http_request_duration_seconds_count{route=\"other\"}") == 1)
        #expect(Self.sample(text, "bridge_http_request_duration_seconds_count{route=\"/public/\"}") == 1)
        #expect(!text.contains("secret-looking"))
        #expect(!text.contains("bridge_http_request_duration_seconds_count{route=\"/api/me\"}"))  // not requested
        #expect((Self.sample(text, "bridge_apple_calls_total{endpoint=\"/auth/keys\",result=\"ok\"}") ?? 0) >= 1)
        #expect((Self.sample(text, "bridge_apple_call_duration_seconds_count{endpoint=\"/auth/keys\"}") ?? 0) >= 1)
        for endpoint in ["/auth/keys", "/auth/revoke", "/auth/token"] {
            #expect(Self.sample(text, "bridge_apple_breaker_open{endpoint=\"\(endpoint)\"}") == 0)
        }
        #expect(Self.sample(text, "bridge_apple_calls_in_flight") == 0)
        #expect(Self.sample(text, "bridge_revocations_pending") == 0)
        #expect(Self.sample(text, "bridge_revocation_oldest_pending_age_seconds") == 0)
    }

    @Test("a callback finds its attempt in memory where it was made, opens it from its state elsewhere, else reads it")
    func loginAttemptLookups() throws {
        let first = try BridgeHarness()
        let secret = try #require(first.app.configuration.secretKey)
        let second = try BridgeHarness([
            "BRIDGE_DATABASE": "sqlite:\(first.databasePath)", "BRIDGE_SECRET_KEY": Data(secret).base64EncodedString(),
            "BRIDGE_PUBLIC_URL": first.app.configuration.publicURL, "APPLE_ID_URL": "http://127.0.0.1:\(first.simulatorPort)",
        ])
        let browser = TestBrowser(first)
        #expect(try browser.signIn().status == 303)
        let fields = try browser.authorizeAtApple(try browser.openLogin(), user: .alan)
        let elsewhere = TestBrowser(second)
        for (name, cookie) in browser.cookies { elsewhere.set(name, cookie) }
        #expect(try elsewhere.post("/apple_redirect", form: fields).status == 303)
        // A state this server never sealed is looked up in the database, and is unknown there.
        let unknown = try elsewhere.post("/apple_redirect", form: fields.replacing("state", with: SecretTokens.random()))
        #expect(unknown.status == 400)

        let (made, finished) = (try Self.scrape(first), try Self.scrape(second))
        let lookups = { (text: String, source: String) in Self.sample(text, "bridge_login_attempt_lookups_total{source=\"\(source)\"}") }
        #expect(lookups(made, "memory") == 1)
        #expect(lookups(made, "state") == 0)
        #expect(lookups(made, "database") == 0)
        #expect(lookups(finished, "memory") == 0)
        #expect(lookups(finished, "state") == 1)
        #expect(lookups(finished, "database") == 1)
    }

    @Test("a sign-in that exchanges its code at Apple looks its attempt up once: what it checked goes off the listener with it")
    func attemptLookedUpOnceWhenCallingApple() throws {
        let harness = try keyedHarness()
        #expect(try TestBrowser(harness).signIn().status == 303)
        let text = try Self.scrape(harness)
        #expect(Self.sample(text, "bridge_apple_calls_total{endpoint=\"/auth/token\",result=\"ok\"}") == 1)
        #expect(Self.sample(text, "bridge_login_attempt_lookups_total{source=\"memory\"}") == 1)
        #expect(Self.sample(text, "bridge_login_attempt_lookups_total{source=\"state\"}") == 0)
        #expect(Self.sample(text, "bridge_login_attempt_lookups_total{source=\"database\"}") == 0)
    }

    @Test("a revocation Apple cannot take shows in the backlog with its age, and leaves it when Apple takes it")
    func revocationBacklog() throws {
        let harness = try keyedHarness()
        let signIn = try harness.nativeSignIn(user: .alan)
        #expect(signIn.status == 200)
        harness.simulator.isUnavailable = true
        let deletion = try harness.api("/api/me", method: "DELETE", bearer: signIn.body["accessToken"]?.stringValue)
        #expect(deletion.body["appleRevocation"]?.stringValue == "queued")

        harness.clock.advance(by: 31)
        #expect(harness.app.processDueRevocations() == 0)
        var text = try Self.scrape(harness)
        #expect(Self.sample(text, "bridge_revocations_pending") == 1)
        #expect((Self.sample(text, "bridge_revocation_oldest_pending_age_seconds") ?? 0) >= 31)
        #expect(Self.sample(text, "bridge_revocation_attempts_total{result=\"failed\"}") == 1)
        #expect((Self.sample(text, "bridge_apple_calls_total{endpoint=\"/auth/revoke\",result=\"server_error\"}") ?? 0) >= 1)

        harness.simulator.isUnavailable = false
        harness.clock.advance(by: 61)
        #expect(harness.app.processDueRevocations() == 1)
        text = try Self.scrape(harness)
        #expect(Self.sample(text, "bridge_revocations_pending") == 0)
        #expect(Self.sample(text, "bridge_revocation_oldest_pending_age_seconds") == 0)
        #expect(Self.sample(text, "bridge_revocation_attempts_total{result=\"completed\"}") == 1)
    }

    @Test("a request that fails on the database is counted by kind, in every group")
    func databaseErrors() throws {
        let metrics = Metrics()
        let mapping = ErrorMapping(presenter: PlainTextErrorPresenter(), logger: Logger(minimumLevel: .error), metrics: metrics)
        let request = Request(method: "GET", path: "/healthz")
        let outage = try mapping.respond(to: request) { _ in .failure(StoreError.unavailable("connection refused")) }.wait()
        #expect(outage.status == 503)
        _ = try mapping.respond(to: request) { _ in .failure(StoreError.database("disk I/O error")) }.wait()
        _ = try mapping.respond(to: request) { _ in .failure(HTTPError(404, "no")) }.wait()
        #expect(metrics.value("bridge_database_errors_total{kind=\"unavailable\"}") == 1)
        #expect(metrics.value("bridge_database_errors_total{kind=\"error\"}") == 1)
    }
}
