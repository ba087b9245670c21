@testable import Bridge
import BridgeSettings
import Foundation
import HTTPServer
import OpenIDProvider
import Testing
import TestSupport
import WebPresentation

/// Chromium checks `form-action` against the redirects that follow a form post, so the re-post page (whose post is
/// answered with a redirect to where the sign-in ends) names those destinations, and nothing more.
@Suite("form-action of the re-post page", .serialized)
struct FormActionPolicyTests {
    static let everyDirectiveButFormAction = "default-src 'none'; script-src 'self'; style-src 'self'; "
        + "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'"

    static func formAction(_ policy: String) -> String? {
        policy.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            .first { $0.hasPrefix("form-action ") }
    }

    static func withoutFormAction(_ policy: String) -> String {
        policy.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.hasPrefix("form-action ") }.joined(separator: "; ")
    }

    @Test("a destination is admitted by its origin, an app's scheme by the scheme; paths need nothing")
    func sources() {
        #expect(ContentSecurityPolicy.source(of: "https://App.Example.com/account/welcome?x=1") == "https://app.example.com")
        #expect(ContentSecurityPolicy.source(of: "http://127.0.0.1:8081/protected/redirect_uri") == "http://127.0.0.1:8081")
        #expect(ContentSecurityPolicy.source(of: "https://[::1]:8443/cb") == "https://[::1]:8443")
        #expect(ContentSecurityPolicy.source(of: "com.example.app:/oauth2redirect") == "com.example.app:")
        #expect(ContentSecurityPolicy.clientRedirectSource("http://127.0.0.1/callback") == "http://127.0.0.1:*")
        #expect(ContentSecurityPolicy.clientRedirectSource("http://[::1]:8080/callback") == "http://[::1]:*")
        #expect(ContentSecurityPolicy.clientRedirectSource("https://rp.example.com:8443/cb") == "https://rp.example.com:8443")
        #expect(ContentSecurityPolicy.source(of: "/session") == nil)
        #expect(ContentSecurityPolicy.source(of: "https://evil.example; script-src *") == nil)
        #expect(ContentSecurityPolicy.source(of: "https://evil.example'/") == nil)
        #expect(ContentSecurityPolicy.source(of: "https://user@evil.example/") == nil)
        #expect(ContentSecurityPolicy.source(of: "java script:alert(1)") == nil)
    }

    @Test("an OpenID client's sign-in: this server and the client's redirect origin, not the web destinations")
    func providerRepostPolicy() throws {
        let returnURLs = try ReturnURLPolicy(setting: "https://shop.example.com/account/*")
        let policy = ContentSecurityPolicy.repostPage(providerRedirectURI: "https://intranet.example.com/protected/redirect_uri",
                                                      afterSignInURL: "https://app.example.com/home", returnURLs: returnURLs)
        #expect(Self.formAction(policy) == "form-action 'self' https://intranet.example.com")
        #expect(Self.withoutFormAction(policy) == Self.everyDirectiveButFormAction)
    }

    @Test("a web sign-in: this server, the after-sign-in URL's origin and the return URLs' origins, each once")
    func webRepostPolicy() throws {
        let returnURLs = try ReturnURLPolicy(setting: "https://shop.example.com/account/*, https://shop.example.com/cart, /welcome")
        let policy = ContentSecurityPolicy.repostPage(providerRedirectURI: nil, afterSignInURL: "https://app.example.com/home",
                                                      returnURLs: returnURLs)
        #expect(Self.formAction(policy) == "form-action 'self' https://app.example.com https://shop.example.com")
        #expect(Self.withoutFormAction(policy) == Self.everyDirectiveButFormAction)
    }

    @Test("destinations on this server only: the re-post page's policy is every page's policy")
    func sameOriginRepostPolicy() {
        let policy = ContentSecurityPolicy.repostPage(providerRedirectURI: nil, afterSignInURL: "/session",
                                                      returnURLs: ReturnURLPolicy())
        #expect(policy == ContentSecurityPolicy.header())
        #expect(Self.formAction(policy) == "form-action 'self'")
    }

    @Test("the re-post page served for a web sign-in names the configured destinations; other pages do not")
    func servedWebRepostPage() throws {
        let harness = try BridgeHarness(["BRIDGE_AFTER_SIGN_IN_URL": "https://app.example.com/home",
                                         "BRIDGE_RETURN_URLS": "https://shop.example.com/account/*"])
        let browser = TestBrowser(harness)
        let login = try browser.openLogin()
        let fields = try browser.authorizeAtApple(login)
        browser.forgetBindingCookies()
        let repost = try browser.post("/apple_redirect", form: fields)
        #expect(repost.status == 200)
        #expect(HTMLDocument(repost.text).first("//form[@id='repost']") != nil)
        let policy = try #require(repost.header("Content-Security-Policy"))
        #expect(Self.formAction(policy) == "form-action 'self' https://app.example.com https://shop.example.com")
        #expect(Self.withoutFormAction(policy) == Self.everyDirectiveButFormAction)

        let loginPolicy = try #require(try browser.get("/login").header("Content-Security-Policy"))
        #expect(Self.formAction(loginPolicy) == "form-action 'self'")
    }

    @Test("the re-post page served for an OpenID client's sign-in names that client's redirect origin only")
    func servedProviderRepostPage() throws {
        let relyingParty = try RelyingParty(settings: ["BRIDGE_AFTER_SIGN_IN_URL": "https://app.example.com/home"])
        let browser = relyingParty.browser
        let start = try browser.get(relyingParty.authorizePath(client: RelyingParty.confidentialClient,
                                                               redirectURI: RelyingParty.proxyRedirect))
        // Its login page, whose form (popup mode, or an app's webview posting its native sign-in) is answered with
        // a redirect to the client: that origin only.
        let loginPolicy = try #require(start.header("Content-Security-Policy"))
        #expect(Self.formAction(loginPolicy) == "form-action 'self' https://proxy.example.com")
        let fields = try browser.authorizeAtApple(try browser.loginPage(start))
        browser.forgetBindingCookies()
        let repost = try browser.post("/apple_redirect", form: fields)
        #expect(repost.status == 200)
        let policy = try #require(repost.header("Content-Security-Policy"))
        #expect(Self.formAction(policy) == "form-action 'self' https://proxy.example.com")
    }

    @Test("dev's simulator is told every destination: clients' redirect URIs, after-sign-in and return URLs")
    func signInDestinationSources() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("clients-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try """
            [{"client_id": "b-proxy", "name": "Proxy", "redirect_uris": ["https://intranet.example.com/oauth2/callback"]},
             {"client_id": "a-app", "name": "App", "redirect_uris": ["com.example.app:/oauth2redirect", "http://127.0.0.1/cb"]}]
            """.write(toFile: file, atomically: true, encoding: .utf8)
        let configuration = try BridgeConfiguration.load(environment: [
            "BRIDGE_CLIENTS_FILE": file, "BRIDGE_AFTER_SIGN_IN_URL": "https://app.example.com/home",
            "BRIDGE_RETURN_URLS": "https://intranet.example.com/*,/welcome", "APPLE_SERVICES_ID": "com.example.web",
        ], mode: .development)
        #expect(configuration.signInDestinationSources == [
            "com.example.app:", "http://127.0.0.1:*", "https://intranet.example.com", "https://app.example.com",
        ])
    }
}
