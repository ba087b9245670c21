import Bridge
import Foundation
import HTTPServer
import Logging
import Mustache
import Synchronization
import TestSupport
import Testing
import WebPresentation

let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path

func makePages(devMode: Bool = false, branding: Branding = Branding(), logger: Logger = .silent) throws -> Pages {
    try Pages(directory: repositoryRoot + "/Templates", devMode: devMode, branding: branding, logger: logger)
}

let loginContext: [String: MustacheValue] = [
    "webConfigured": true, "showButton": true, "authorizeURL": "https://appleid.example/auth", "state": "s1",
    "nonce": "n1", "redirectURI": "https://bridge.example/apple_redirect", "clientID": "com.example.web", "scope": "name email",
]

@Suite("Pages")
struct PagesTests {
    @Suite("Languages")
    struct Languages {
        @Test("The login page in Korean: lang, heading, and Apple's own Korean button title")
        func koreanLogin() throws {
            let page = HTMLDocument(try makePages().render("login", language: "ko", loginContext).bodyText)
            #expect(page.first("//html")?.attributes["lang"] == "ko")
            #expect(page.first("//h1")?.text == "AppleSignInBridge에 로그인")
            #expect(page.first("//a[@id='apple-signin']")?.text.trimmingCharacters(in: .whitespacesAndNewlines) == "Apple로 로그인")
            #expect(page.first("//title")?.text == "로그인 · AppleSignInBridge")
        }

        @Test("The English login page says Sign in with Apple; under LanguageSelection it links to the Korean one")
        func englishLogin() throws {
            let pages = try makePages()
            let alone = HTMLDocument(pages.render("login", language: "en", loginContext).bodyText)
            #expect(alone.first("//a[@id='apple-signin']")?.text.trimmingCharacters(in: .whitespacesAndNewlines) == "Sign in with Apple")
            #expect(alone.first("//nav") == nil, "without LanguageSelection a ?lang= link would do nothing")
            let page = HTMLDocument(try respond(pages, headers: [("Accept-Language", "en")]).bodyText)
            #expect(page.first("//nav//a[@hreflang='ko']")?.attributes["href"] == "/login?lang=ko")
            #expect(page.first("//nav//*[@aria-current='true']")?.text == "English")
        }

        func respond(_ pages: Pages, query: [(String, String)] = [], headers: [(String, String)]) throws -> Response {
            let chain = LanguageSelection(ClosureResponder { _ in pages.render("login", loginContext) },
                                          negotiation: pages.catalogs.negotiation)
            return try chain.respond(to: Request(method: "GET", path: "/login", query: FormFields(query), headers: HTTPHeaders(headers))).wait()
        }

        @Test("Accept-Language picks the page language by q-value; the response says which and varies on it")
        func acceptLanguage() throws {
            let pages = try makePages()
            let korean = try respond(pages, headers: [("Accept-Language", "en;q=0.5, ko-KR;q=0.9")])
            let english = try respond(pages, headers: [("Accept-Language", "fr, en;q=0.8, ko;q=0.7")])
            #expect(HTMLDocument(korean.bodyText).first("//html")?.attributes["lang"] == "ko")
            #expect(korean.headers["Content-Language"] == "ko")
            #expect(korean.headers["Vary"]?.contains("Accept-Language") == true)
            #expect(HTMLDocument(english.bodyText).first("//html")?.attributes["lang"] == "en")
            #expect(korean.headers["Set-Cookie"] == nil)
        }

        @Test("?lang=ko switches the language and is remembered in a cookie that beats Accept-Language")
        func explicitSwitch() throws {
            let pages = try makePages()
            let switched = try respond(pages, query: [("lang", "ko")], headers: [("Accept-Language", "en")])
            #expect(HTMLDocument(switched.bodyText).first("//h1")?.text.hasSuffix("에 로그인") == true)
            let cookie = try #require(switched.headers["Set-Cookie"])
            #expect(cookie.hasPrefix("\(PageLanguage.cookieName)=ko;"))
            let later = try respond(pages, headers: [("Accept-Language", "en"), ("Cookie", "\(PageLanguage.cookieName)=ko")])
            #expect(HTMLDocument(later.bodyText).first("//html")?.attributes["lang"] == "ko")
            let unknown = try respond(pages, query: [("lang", "xx")], headers: [("Accept-Language", "en")])
            #expect(unknown.headers["Set-Cookie"] == nil)
            #expect(HTMLDocument(unknown.bodyText).first("//html")?.attributes["lang"] == "en")
        }

        @Test("The rate-limit message is plural-aware in both languages")
        func plural() throws {
            let pages = try makePages()
            let one = HTMLDocument(pages.error(status: 429, reason: "rate_limited", count: 1, retryURL: nil, language: "en").bodyText)
            let many = HTMLDocument(pages.error(status: 429, reason: "rate_limited", count: 30, retryURL: nil, language: "en").bodyText)
            let korean = HTMLDocument(pages.error(status: 429, reason: "rate_limited", count: 30, retryURL: nil, language: "ko").bodyText)
            #expect(one.first("//p[@class='lead']")?.text == "Please wait 1 second and try again.")
            #expect(many.first("//p[@class='lead']")?.text == "Please wait 30 seconds and try again.")
            #expect(korean.first("//p[@class='lead']")?.text == "30초 뒤에 다시 시도해 주세요.")
            #expect(korean.first("//h1")?.text == "로그인 시도가 너무 많습니다")
        }

        @Test("The session page shows the sign-in time per language, machine-readable in <time>, and the flow in words")
        func sessionTime() throws {
            let context: [String: MustacheValue] = [
                "user": .object(["sub": "001.abc", "email": "x7@privaterelay.appleid.com", "isPrivateEmail": true,
                                 "emailVerified": true, "displayName": "민지"]),
                "flow": "web", "nonceVerified": true, "signedInAt": "2026-12-01 03:04:05 UTC", "csrfToken": "c",
            ]
            let page = HTMLDocument(try makePages().render("session", language: "ko", context).bodyText)
            #expect(page.first("//time")?.attributes["datetime"] == "2026-12-01T03:04:05Z")
            #expect(page.first("//time")?.text.contains("2026년 12월 1일") == true)
            #expect(page.first("//h1")?.text == "민지님, 환영합니다")
            #expect(page.first("//*[@id='flow']")?.text == "이 웹사이트(Apple 로그인 페이지)")
            var fromSeconds = context
            fromSeconds["signedInAt"] = .int(1_796_094_245)
            let english = HTMLDocument(try makePages().render("session", language: "en", fromSeconds).bodyText)
            #expect(english.first("//time")?.attributes["datetime"] == "2026-12-01T03:04:05Z")
            #expect(english.first("//time")?.text.contains("December 1, 2026") == true)
        }
    }

    @Suite("Layout")
    struct Layout {
        @Test("An email may wrap after the local part and between domain labels, never inside .com")
        func emailWrapping() throws {
            let html = try makePages().render("session", language: "en", [
                "user": .object(["sub": "s", "email": "a<b>@privaterelay.appleid.com"]), "csrfToken": "c",
            ]).bodyText
            #expect(html.contains(#"<span class="email-local">a&lt;b&gt;</span><wbr><span class="email-part">@privaterelay</span><wbr><span class="email-part">.appleid</span><wbr><span class="email-part">.com</span>"#))
        }

        @Test("A cancelled sign-in is neutral: no error icon, no status line; an error has exactly one action")
        func cancelledAndErrors() throws {
            let pages = try makePages()
            let cancelled = HTMLDocument(pages.error(status: 200, reason: "cancelled", language: "en").bodyText)
            #expect(cancelled.first("//*[contains(@class,'error-icon')]") == nil)
            #expect(!cancelled.text.contains("Error"))
            #expect(!cancelled.text.contains("!"))
            let failed = HTMLDocument(pages.error(status: 400, reason: "state_expired", language: "en").bodyText)
            #expect(failed.select("//main//a").count == 1)
            #expect(failed.first("//main//a")?.text == "Try again")
            #expect(failed.first("//p[@class='status-code']")?.text == "Error code 400")
            let refused = HTMLDocument(pages.error(status: 403, reason: "sign_out_refused", retryURL: "/session", language: "en").bodyText)
            #expect(refused.first("//main//a")?.attributes["href"] == "/session")
            #expect(refused.first("//main//a")?.text == "Back to your account")
        }

        @Test("On the deletion confirmation, Cancel comes before the destructive button")
        func cancelFirst() throws {
            let page = HTMLDocument(try makePages().render("account-delete", language: "en", ["csrfToken": "c"]).bodyText)
            let controls = page.select("//form[@action='/account/delete']/*[self::a or self::button]").map(\.name)
            #expect(controls == ["a", "button"])
        }

        @Test("The header shows the operator's name and logo; the developer tagline only in development")
        func branding() throws {
            let branded = try makePages(branding: Branding(siteName: "Example Shop", logoURL: "/public/img/logo.svg"))
            let page = HTMLDocument(branded.render("login", language: "en", loginContext).bodyText)
            #expect(page.first("//h1")?.text == "Sign in to Example Shop")
            #expect(page.first("//header//img")?.attributes["src"] == "/public/img/logo.svg")
            #expect(page.first("//title")?.text == "Sign in · Example Shop")
            #expect(page.first("//footer") == nil)
            let dev = HTMLDocument(try makePages(devMode: true).render("login", language: "en", loginContext).bodyText)
            #expect(dev.first("//footer")?.text.contains("development mode") == true)
        }

        @Test("The bridge script is the page's only script even in JS SDK mode; Apple's SDK URL follows the language")
        func scripts() throws {
            var context = loginContext
            context["useJSSDK"] = true
            context["appleJSSDKBaseURL"] = "https://appleid.cdn-apple.com"
            let page = HTMLDocument(try makePages().render("login", language: "ko", context).bodyText)
            #expect(page.select("//script").compactMap { $0.attributes["src"] } == ["/public/js/apple-bridge.js"])
            #expect(page.first("//a[@id='apple-signin']")?.attributes["data-sdk-src"]
                    == "https://appleid.cdn-apple.com/appleauth/static/jsapi/appleid/1/ko_KR/appleid.auth.js")
            #expect(page.first("//a[@id='apple-signin']")?.attributes["data-use-popup"] == nil)
            #expect(page.first("//*[@id='apple-signin-cancelled']") == nil)
        }

        @Test("Popup mode asks the bridge script for the popup and holds the cancelled notice, hidden, in the page's language",
              arguments: [("en", "Sign-in cancelled.", "You cancelled signing in with Apple."),
                          ("ko", "로그인이 취소되었습니다.", "Apple로 로그인을 취소했습니다.")])
        func popup(language: String, heading: String, message: String) throws {
            var context = loginContext
            context["useJSSDK"] = true
            context["useJSPopup"] = true
            context["appleJSSDKBaseURL"] = "http://127.0.0.1:8081"
            let page = HTMLDocument(try makePages().render("login", language: language, context).bodyText)
            let link = try #require(page.first("//a[@id='apple-signin']"))
            #expect(link.attributes["data-use-popup"] == "1")
            #expect(link.attributes["data-sdk-src"]?.hasPrefix("http://127.0.0.1:8081/appleauth/static/jsapi/appleid/1/") == true)
            let notice = try #require(page.first("//p[@id='apple-signin-cancelled']"))
            #expect(notice.attributes["hidden"] != nil)
            #expect(notice.attributes["role"] == "status")
            #expect(page.first("//p[@id='apple-signin-cancelled']/strong")?.text == heading)
            #expect(notice.text.contains(message))
            #expect(page.select("//script").compactMap { $0.attributes["src"] } == ["/public/js/apple-bridge.js"])
        }
    }

    @Test("A render failure is logged with the template's name, and the person gets a plain 500")
    func renderFailureIsLogged() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pages-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory + "/Templates", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: repositoryRoot + "/Locales", toPath: directory + "/Locales")
        for name in ["login", "session", "error", "repost", "header", "footer"] {
            try "x".write(toFile: directory + "/Templates/\(name).mustache", atomically: true, encoding: .utf8)
        }
        try "{{> loop}}".write(toFile: directory + "/Templates/loop.mustache", atomically: true, encoding: .utf8)
        let lines = Mutex<[String]>([])
        let logger = Logger(sink: { line in lines.withLock { $0.append(line) } })
        let pages = try Pages(directory: directory + "/Templates", devMode: false, logger: logger)
        let response = pages.render("loop", language: "en", [:])
        #expect(response.status == 500)
        #expect(response.bodyText == "The page could not be shown.\n")
        let logged = lines.withLock { $0 }
        #expect(logged.count == 1)
        #expect(logged.first?.contains("page_render_failed") == true)
        #expect(logged.first?.contains("loop") == true)
    }
}
