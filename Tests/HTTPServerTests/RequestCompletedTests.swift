import Foundation
import HTTPServer
import Synchronization
import Testing
import TestSupport

/// `ServerConfiguration.requestCompleted` and `Router.metricsRoute(for:)`: what `bridge_http_request_duration_seconds`
/// is made of.
@Suite("Requests reported when done, for metrics", .serialized)
struct RequestCompletedTests {
    @Test("each request is reported once done, with its path (no query), status and time taken")
    func reported() throws {
        let seen = Mutex<[(path: String, status: Int, seconds: Double)]>([])
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.requestCompleted = { path, status, seconds in seen.withLock { $0.append((path, status, seconds)) } }
        try withServer(configuration, responder: testRouter()) { server in
            _ = try RawHTTPClient.request(port: server.port, path: "/echo?value=not-for-metrics")
            _ = try RawHTTPClient.request(port: server.port, path: "/slow")
            _ = try RawHTTPClient.request(port: server.port, path: "/missing")
            // Reported when libmicrohttpd is done with the request, just after the client has the answer.
            for _ in 0..<200 where seen.withLock({ $0.count }) < 3 { Thread.sleep(forTimeInterval: 0.01) }
        }
        let reports = seen.withLock { $0 }
        #expect(reports.map(\.path) == ["/echo", "/slow", "/missing"])
        #expect(reports.map(\.status) == [200, 200, 404])
        #expect(reports.count == 3 && reports[1].seconds >= 0.6 && reports[0].seconds < 0.6)
    }

    @Test("a path counts under its registered path or prefix, else under other: never the path a client chose")
    func metricsRoute() {
        var router = Router()
        router.add("GET", "/login") { _ in .text("") }
        router.addPrefix("GET", "/public/") { _ in .text("") }
        #expect(router.metricsRoute(for: "/login") == "/login")
        #expect(router.metricsRoute(for: "/public/css/site.css") == "/public/")
        #expect(router.metricsRoute(for: "/login/extra") == "other")
        #expect(router.metricsRoute(for: "/secret-token-in-a-path") == "other")
        #expect(Set(router.metricsRoutes) == ["/login", "/public/", "other"])
    }
}
