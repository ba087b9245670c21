@testable import Bridge
import Foundation
import HTTPServer
import JSON
import Storage
import Testing
import TestSupport
import WebPresentation

/// Every path belongs to one route group, and everything said there — a handler's answer, the router's 404 and
/// 405, the listener's refusals, the rest of a resumed request — is in that group's shape.
@Suite("Route groups own their paths", .serialized)
struct RouteGroupTests {
    static func json(_ response: RawHTTPResponse) throws -> JSONValue { try JSONValue.parse(response.body) }

    /// RFC 6749 §5.2: `error` and `error_description`, JSON, never cached.
    /// `throughTheApp`: answered by the application's responder (with its security headers), not a bare router.
    static func expectOAuthError(_ response: RawHTTPResponse, _ status: Int, _ error: String, throughTheApp: Bool = true,
                                 sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(response.status == status, sourceLocation: sourceLocation)
        #expect(response.header("Content-Type") == "application/json", sourceLocation: sourceLocation)
        #expect(response.header("Cache-Control") == "no-store", sourceLocation: sourceLocation)
        if throughTheApp {
            #expect(response.headerValues("X-Content-Type-Options") == ["nosniff"], sourceLocation: sourceLocation)
        }
        let body = try json(response)
        #expect(body["error"]?.stringValue == error, sourceLocation: sourceLocation)
        #expect(body["error_description"]?.stringValue?.isEmpty == false, sourceLocation: sourceLocation)
        #expect(body["message"] == nil, sourceLocation: sourceLocation)
    }

    @Test("GET /oauth/token is a 405 in RFC 6749 JSON with no-store and Allow")
    func oauthWrongMethod() throws {
        let harness = try BridgeHarness()
        let response = try harness.request(path: "/oauth/token")
        try Self.expectOAuthError(response, 405, "invalid_request")
        #expect(response.header("Allow") == "POST")
    }

    @Test("a body too large for /oauth/token is a 413 in RFC 6749 JSON")
    func oauthBodyTooLarge() throws {
        let harness = try BridgeHarness()
        let form = "grant_type=refresh_token&refresh_token=" + String(repeating: "a", count: 70_000)
        let response = try harness.request(method: "POST", path: "/oauth/token",
                                                 headers: [("Content-Type", "application/x-www-form-urlencoded")], body: form)
        try Self.expectOAuthError(response, 413, "invalid_request")
    }

    @Test("an unknown path under /oauth/ is a 404 in RFC 6749 JSON")
    func oauthUnknownPath() throws {
        let harness = try BridgeHarness()
        try Self.expectOAuthError(try harness.request(path: "/oauth/nosuch"), 404, "invalid_request")
        try Self.expectOAuthError(try harness.request(method: "POST", path: "/oauth/nosuch"),
                                  404, "invalid_request")
    }

    @Test("an unknown path under /api/ is a 404 in the JSON API's shape")
    func apiUnknownPath() throws {
        let harness = try BridgeHarness()
        let response = try harness.request(path: "/api/nosuch")
        #expect(response.status == 404)
        #expect(response.header("Content-Type") == "application/json")
        #expect(response.header("Cache-Control") == "no-store")
        #expect(response.headerValues("X-Content-Type-Options") == ["nosniff"])
        let body = try Self.json(response)
        #expect(body["error"]?.stringValue == "not_found")
        #expect(body["message"]?.stringValue?.isEmpty == false)
    }

    @Test("a path under /api/ whose next character is a combining mark is still the API's: JSON 404, not a page",
          arguments: ["/api/%CC%B1x", "/api/%CC%81", "/oauth/%CC%B1x"])
    func combiningMarkAfterPrefix(path: String) throws {
        let harness = try BridgeHarness()
        let response = try harness.request(path: path)
        #expect(response.status == 404)
        #expect(response.header("Content-Type") == "application/json", "\(path)")
        #expect(response.headerValues("X-Content-Type-Options") == ["nosniff"])
    }

    @Test("every answer that is not a page says nosniff, once: JSON, metrics, health, a static file")
    func noSniffEverywhere() throws {
        let harness = try BridgeHarness()
        for path in ["/healthz", "/metrics", "/public/css/site.css", "/api/me", "/.well-known/openid-configuration"] {
            let response = try harness.request(path: path)
            #expect(response.headerValues("X-Content-Type-Options") == ["nosniff"], "\(path) \(response.status)")
        }
    }

    @Test("pages stay HTML: an unknown page, a wrong method on a page, the authorization endpoint, a body too large")
    func pagesStayHTML() throws {
        let harness = try BridgeHarness()
        let unknown = try harness.request(path: "/nosuch")
        #expect(unknown.status == 404 && unknown.header("Content-Type")?.hasPrefix("text/html") == true)
        #expect(unknown.header("Content-Security-Policy") != nil)
        let wrongMethod = try harness.request(method: "DELETE", path: "/login")
        #expect(wrongMethod.status == 405 && wrongMethod.header("Content-Type")?.hasPrefix("text/html") == true)
        #expect(wrongMethod.header("Allow") != nil)
        let authorize = try harness.request(method: "PUT", path: "/oauth/authorize")
        #expect(authorize.status == 405 && authorize.header("Content-Type")?.hasPrefix("text/html") == true)
        let notAForm = try harness.request(method: "POST", path: "/oauth/authorize",
                                                 headers: [("Content-Type", "application/json")], body: "{}")
        #expect(notAForm.status == 415 && notAForm.header("Content-Type")?.hasPrefix("text/html") == true)
        let tooLarge = try harness.request(method: "POST", path: "/apple_redirect",
                                                 headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                                 body: "state=" + String(repeating: "a", count: 70_000))
        #expect(tooLarge.status == 413 && tooLarge.header("Content-Type")?.hasPrefix("text/html") == true)
        #expect(tooLarge.text.contains("body_too_large"))
    }

    @Test("the listener's refusals take the shape of the group the path belongs to",
          arguments: [400, 413, 429, 503])
    func listenerRefusals(status: Int) throws {
        let harness = try BridgeHarness()
        let refuse = harness.app.routes.refusalResponse
        for path in ["/oauth/token", "/oauth/nosuch", "/.well-known/openid-configuration"] {
            let response = refuse(path, status, "Refused.")
            #expect(response.status == status, "\(path)")
            #expect(response.headers["Content-Type"] == "application/json", "\(path)")
            #expect(response.headers["Cache-Control"] == "no-store", "\(path)")
            let body = try JSONValue.parse(response.body)
            #expect(body["error"]?.stringValue == OAuthErrorPresenter.error(forStatus: status), "\(path)")
            #expect(body["error_description"]?.stringValue == "Refused.", "\(path)")
        }
        for path in ["/api/auth/apple", "/api/nosuch", "/apple/notifications", "/apple/nosuch"] {
            let response = refuse(path, status, "Refused.")
            #expect(response.status == status && response.headers["Content-Type"] == "application/json", "\(path)")
            #expect(response.headers["Cache-Control"] == "no-store", "\(path)")
            let body = try JSONValue.parse(response.body)
            #expect(body["error"]?.stringValue == HTTPErrorCode.code(for: status), "\(path)")
            #expect(body["message"]?.stringValue == "Refused.", "\(path)")
        }
        for path in ["/healthz", "/public/css/site.css"] {
            let response = refuse(path, status, "Refused.")
            #expect(response.status == status && response.headers["Content-Type"]?.hasPrefix("text/plain") == true, "\(path)")
        }
        for path in ["/login", "/apple_redirect", "/oauth/authorize", "/nosuch"] {
            let response = refuse(path, status, "Refused.")
            #expect(response.status == status && response.isHTML, "\(path)")
            #expect(response.headers["Content-Security-Policy"] != nil, "\(path)")
            #expect(!response.bodyText.contains("internal_error"), "\(path)")
        }
    }

    @Test("with CORS on, every registered JSON API route has a preflight for exactly its methods, and no other path has one")
    func preflightsFollowTheRoutes() throws {
        let origin = "https://app.example.com"
        let harness = try BridgeHarness(["BRIDGE_CORS_ORIGINS": origin])
        let api = harness.app.routes.groups.api.group
        var methods: [String: Set<String>] = [:]
        for registration in harness.app.routes.router.registrations where registration.group === api && registration.method != "OPTIONS" {
            methods[registration.path, default: []].insert(registration.method)
        }
        #expect(Set(methods.keys) == ["/api/auth/nonce", "/api/auth/apple", "/api/auth/apple-login", "/api/auth/refresh", "/api/auth/logout", "/api/me"])
        #expect(methods["/api/me"] == ["GET", "DELETE"])
        func preflight(_ path: String, _ method: String) throws -> RawHTTPResponse {
            try harness.request(method: "OPTIONS", path: path,
                                      headers: [("Origin", origin), ("Access-Control-Request-Method", method)])
        }
        for (path, allowed) in methods {
            for method in allowed {
                let response = try preflight(path, method)
                #expect(response.status == 204, "\(path) \(method)")
                let advertised = Set((response.header("Access-Control-Allow-Methods") ?? "").split(separator: ",")
                    .map { $0.trimmingCharacters(in: .whitespaces) })
                #expect(advertised == allowed, "\(path)")
            }
        }
        let unregistered = try preflight("/api/nosuch", "POST")
        #expect(unregistered.status == 404 && unregistered.header("Access-Control-Allow-Methods") == nil)
        #expect(try Self.json(unregistered)["error"]?.stringValue == "not_found")
        let oauth = try preflight("/oauth/token", "POST")
        #expect(oauth.status == 405 && oauth.header("Access-Control-Allow-Methods") == nil)
    }

    /// A route whose handler suspends on a real group-committed write and knows nothing of resuming: answered by
    /// the rest of its work, or with that rest's error in its group's shape.
    static func suspendingRoutes(_ app: ComposedService, failing: Bool) -> Router {
        let store = StoreAccess(app.store) { $0 }
        let handler: Router.ReplyHandler = { request in
            request.answer(afterWriting: { _ in request.path }, to: store) { path in
                if failing { throw StoreError.unavailable("the test says so") }
                return .text("written for \(path)")
            }
        }
        let groups = app.routes.groups
        var router = Router(fallback: groups.web.group)
        router.add("GET", "/page", groups.web.group.route(replying: handler))
        router.add("POST", "/callback", groups.appleCallbacks.formPost { request, _ in try handler(request) })
        router.add("POST", "/apple/event", groups.appleCallbacks.notification(handler))
        router.add("POST", "/api/thing", groups.api.endpoint(handler))
        router.add("POST", "/api/limited", groups.api.endpoint(rateLimited: true, handler))
        router.add("GET", "/status", groups.operations.group.route(replying: handler))
        router.add("POST", "/oauth/thing", groups.openIDProvider.endpoint(replying: handler))
        return router
    }

    /// The suspending routes on a listener of their own with one thread, so that every write suspends its request.
    static func suspendingServer(_ harness: BridgeHarness, failing: Bool) throws -> MicroHTTPDListener {
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.threadPoolSize = 1
        let server = MicroHTTPDListener(configuration: configuration, responder: suspendingRoutes(harness.app, failing: failing),
                                        logger: .silent)
        try server.start()
        return server
    }

    static func post(_ method: String, _ path: String, to server: MicroHTTPDListener) throws -> RawHTTPResponse {
        try RawHTTPClient.request(port: server.port, method: method, path: path,
                                  headers: [("Content-Type", "application/x-www-form-urlencoded")], body: "a=b")
    }

    static let suspendingPaths = [("GET", "/page"), ("POST", "/callback"), ("POST", "/apple/event"), ("POST", "/api/thing"),
                                  ("POST", "/api/limited"), ("GET", "/status"), ("POST", "/oauth/thing")]

    @Test("a handler with a suspending write, in any group, is answered on resume without any code for it")
    func resumedWithoutHandlerCode() throws {
        let harness = try BridgeHarness()
        let server = try Self.suspendingServer(harness, failing: false)
        defer { server.shutdown(quiescing: false) }
        for (method, path) in Self.suspendingPaths {
            let response = try Self.post(method, path, to: server)
            #expect(response.status == 200, "\(path)")
            #expect(response.text == "written for \(path)", "\(path)")
        }
    }

    @Test("the rest of a resumed request that fails is answered in its group's shape")
    func resumedErrorsInGroupShape() throws {
        let harness = try BridgeHarness()
        let server = try Self.suspendingServer(harness, failing: true)
        defer { server.shutdown(quiescing: false) }
        func send(_ method: String, _ path: String) throws -> RawHTTPResponse { try Self.post(method, path, to: server) }
        for (method, path) in Self.suspendingPaths {
            let response = try send(method, path)
            #expect(response.status == 503, "\(path)")
            #expect(response.header("Retry-After") == String(StoreOutage.retryAfterSeconds), "\(path)")
        }
        #expect(try send("GET", "/page").header("Content-Type")?.hasPrefix("text/html") == true)
        #expect(try send("POST", "/callback").header("Content-Type")?.hasPrefix("text/html") == true)
        #expect(try send("GET", "/status").header("Content-Type")?.hasPrefix("text/plain") == true)
        #expect(try Self.json(send("POST", "/api/thing"))["error"]?.stringValue == "service_unavailable")
        #expect(try Self.json(send("POST", "/apple/event"))["error"]?.stringValue == "service_unavailable")
        try Self.expectOAuthError(try send("POST", "/oauth/thing"), 503, "temporarily_unavailable", throughTheApp: false)
    }
}
