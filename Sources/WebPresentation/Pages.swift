import Foundation
import HTTPServer
import Localization
import Logging
import Mustache

/// The operator's name and logo for the page header. Without a name the product's name is shown.
public struct Branding: Sendable, Equatable {
    public var siteName: String?
    /// A same-origin path such as `/public/img/logo.svg` (the page's CSP allows images from 'self' only).
    public var logoURL: String?

    public init(siteName: String? = nil, logoURL: String? = nil) {
        self.siteName = siteName
        self.logoURL = logoURL
    }
}

/// Renders the HTML pages from `Templates/`, compiled once at start-up, with every text from the catalogs in
/// `Locales/` (beside `Templates/`). Templates reach catalog texts as `{{t.some.key}}`.
public struct Pages: Sendable {
    package let library: TemplateLibrary
    package let devMode: Bool
    public let catalogs: Catalogs
    package let branding: Branding
    package let logger: Logger
    /// Templates that are reached by GET and so can offer links to themselves in another language.
    package static let languageSwitchPages: Set<String> = ["login", "session"]

    public init(directory: String, devMode: Bool, branding: Branding = Branding(), logger: Logger = Logger()) throws {
        library = try TemplateLibrary(directory: directory)
        self.devMode = devMode
        self.branding = branding
        self.logger = logger
        for required in ["login", "session", "error", "repost", "header", "footer"] where !library.names.contains(required) {
            throw TemplateError(file: "\(directory)/\(required).mustache", line: 0, message: "template is missing")
        }
        catalogs = try Catalogs.load(directory: Self.localesDirectory(besideTemplates: directory))
        if let problem = catalogs.problems().first { throw CatalogError(language: catalogs.defaultLanguage, key: nil, problem: "differs from another catalog: \(problem)") }
    }

    /// `Locales/` sits beside `Templates/`.
    public static func localesDirectory(besideTemplates directory: String) -> String {
        (directory as NSString).deletingLastPathComponent + "/Locales"
    }

    /// The language of this page: the one given, else the request's (see `PageLanguage`), else the default.
    package func language(_ explicit: String?) -> String {
        let chosen = explicit ?? PageLanguage.current
        return chosen.flatMap { catalogs.byLanguage[$0] != nil ? $0 : nil } ?? catalogs.defaultLanguage
    }

    public func render(_ name: String, status: Int = 200, language: String? = nil, _ context: [String: MustacheValue]) -> Response {
        let language = self.language(language)
        let context = pageContext(name, language: language, status: status, context)
        do {
            return .html(try library.render(name, .object(context)), status: status)
        } catch {
            // Templates compiled at start-up, so this is a bug: log it for the operator, answer plainly.
            logger.error("page_render_failed", ["template": name, "language": language, "error": String(describing: error)])
            return .text(catalogs.format("layout.render_failed", language: language) + "\n", status: 500)
        }
    }

    /// A catalog text in the page's language, e.g. for a message built in code.
    public func text(_ key: String, language: String? = nil, count: Int? = nil, _ arguments: [String: String] = [:]) -> String {
        catalogs.format(key, language: self.language(language), count: count, arguments)
    }

    // MARK: - Error pages

    /// A page that says what went wrong, in words a person understands, with one way onward.
    public func error(status: Int, heading: String, message: String, detail: String? = nil,
                      retryURL: String? = "/login", language: String? = nil) -> Response {
        let language = self.language(language)
        return error(status: status, heading: heading, message: message, detail: detail,
                     action: defaultAction(retryURL: retryURL, status: status), language: language)
    }

    /// The error page for a reason code: heading and message are the catalog's `error.<reason>.heading` and
    /// `error.<reason>.message` (plural-aware with `count`, placeholders filled from `arguments`).
    public func error(status: Int, reason: String, count: Int? = nil, arguments: [String: String] = [:],
                      detail: String? = nil, retryURL: String? = "/login", language: String? = nil) -> Response {
        error(status: status, reason: reason, count: count, arguments: arguments, detail: detail,
              action: defaultAction(retryURL: retryURL, status: status), language: language)
    }

    /// The error page for a reason code with the given way onward (and any further template values in `extra`).
    package func error(status: Int, reason: String, count: Int? = nil, arguments: [String: String] = [:], detail: String? = nil,
                       action: PageAction?, extra: [String: MustacheValue] = [:], language: String? = nil) -> Response {
        let language = self.language(language)
        return error(status: status,
                     heading: catalogs.format("error.\(reason).heading", language: language, count: count, arguments),
                     message: catalogs.format("error.\(reason).message", language: language, count: count, arguments),
                     detail: detail, action: action, extra: extra, language: language)
    }

    package func error(status: Int, heading: String, message: String, detail: String?, action: PageAction?,
                       extra: [String: MustacheValue] = [:], language: String) -> Response {
        var context = extra
        context["heading"] = .string(heading)
        context["message"] = .string(message)
        context["status"] = .int(status)
        // A page may present a refusal calmly (no alarm icon, no status line) by giving `isFailure: false`.
        if context["isFailure"] == nil { context["isFailure"] = .bool(status >= 400) }
        if let detail { context["detail"] = .string(detail) }
        if let action {
            context["action"] = .object(["href": .string(action.href),
                                         "label": .string(catalogs.format(action.labelKey, language: language))])
        }
        return render("error", status: status, language: language, context)
    }

    /// One action: back to where trying again makes sense, or back to the start.
    package func defaultAction(retryURL: String?, status: Int) -> PageAction {
        let href = retryURL ?? "/login"
        switch (href, retryURL != nil && status >= 400) {
        case ("/session", _): return PageAction(href: href, labelKey: "error.action.account")
        case (_, true): return PageAction(href: href, labelKey: "error.action.retry")
        default: return PageAction(href: href, labelKey: "error.action.start")
        }
    }

    /// A message's plural forms with `{count}` left in, for a script that counts (e.g. `one`, `other`).
    package func pluralForms(_ key: String, language: String? = nil) -> [String: MustacheValue] {
        guard case .plural(let forms)? = catalogs.catalog(self.language(language)).messages[key] else { return [:] }
        return Dictionary(uniqueKeysWithValues: forms.map { ($0.key.rawValue, MustacheValue.string($0.value)) })
    }
}

/// The one way onward an error page offers: where it goes and the catalog key of its label.
package struct PageAction: Sendable, Equatable {
    package var href: String
    package var labelKey: String

    package init(href: String, labelKey: String) {
        self.href = href
        self.labelKey = labelKey
    }

    package static let signIn = PageAction(href: "/login", labelKey: "error.action.start")
    package static let tryAgain = PageAction(href: "/login", labelKey: "error.action.retry")
    package static let account = PageAction(href: "/session", labelKey: "error.action.account")
}

// MARK: - What every page gets

extension Pages {
    package func pageContext(_ name: String, language: String, status: Int, _ given: [String: MustacheValue]) -> [String: MustacheValue] {
        var context = given
        let catalog = catalogs.catalog(language)
        let siteName = branding.siteName ?? catalogs.format("layout.fallback_site_name", language: language)
        var arguments = ["site": siteName, "status": String(status)]
        if case .object(let user)? = given["user"] {
            if case .string(let name)? = user["displayName"] { arguments["name"] = name }
            if case .string(let email)? = user["email"] {
                var user = user
                user["emailHTML"] = .string(Self.emailHTML(email))
                context["user"] = .object(user)
            }
        }
        context["t"] = texts(language, arguments)
        context["lang"] = .string(language)
        context["devMode"] = .bool(devMode)
        context["siteName"] = .string(siteName)
        if let logo = branding.logoURL { context["logoURL"] = .string(logo) }
        context["pageTitle"] = .string(pageTitle(name, language: language, given))
        if case .string(let flow)? = given["flow"], catalog.messages["session.flow.\(flow)"] != nil {
            context["flowLabel"] = .string(catalogs.format("session.flow.\(flow)", language: language))
        }
        if let date = Self.date(given["signedInAt"]) {
            context["signedInAtISO"] = .string(DateFormatting.iso8601(date))
            context["signedInAtText"] = .string(DateFormatting.dateTime(date, language: language))
        }
        context["statusLine"] = .string(catalogs.format("error.status_line", language: language, arguments))
        // The switch's links only work where LanguageSelection reads `?lang=`, which is what sets PageLanguage.
        if Self.languageSwitchPages.contains(name), catalogs.languages.count > 1, PageLanguage.current != nil {
            var path = "/" + name
            // A page shown at another path (the login page of an OpenID client's authorization).
            if case .string(let shownAt)? = given["languagePath"] { path = shownAt }
            // A query the page must keep across the switch (the login page's allowed return_to).
            if case .string(let query)? = given["languageQuery"], !query.isEmpty { path += "?" + query + "&" } else { path += "?" }
            context["languageLinks"] = languageLinks(path: path, current: language)
            context["hasLanguageLinks"] = true
        }
        return context
    }

    /// The title in the browser tab: the page's own (`title.<template>`), else the error heading.
    package func pageTitle(_ name: String, language: String, _ given: [String: MustacheValue]) -> String {
        if catalogs.contains("title.\(name)") { return catalogs.format("title.\(name)", language: language) }
        if case .string(let heading)? = given["heading"] { return heading }
        if case .string(let title)? = given["title"] { return title }
        return ""
    }

    /// The catalog's texts as nested objects (`login.heading` → t.login.heading), placeholders filled.
    package func texts(_ language: String, _ arguments: [String: String]) -> MustacheValue {
        var root: [String: MustacheValue] = [:]
        for (key, message) in catalogs.catalog(language).messages {
            guard case .text(let text) = message else { continue }
            Self.insert(.string(Catalog.fill(text, arguments)), at: key.split(separator: ".").map(String.init)[...], into: &root)
        }
        return .object(root)
    }

    package static func insert(_ value: MustacheValue, at path: ArraySlice<String>, into object: inout [String: MustacheValue]) {
        guard let head = path.first else { return }
        if path.count == 1 { object[head] = value; return }
        var child: [String: MustacheValue] = [:]
        if case .object(let existing)? = object[head] { child = existing }
        insert(value, at: path.dropFirst(), into: &child)
        object[head] = .object(child)
    }

    /// Links to this page in each language; `path` ends in `?` or `&`.
    package func languageLinks(path: String, current: String) -> MustacheValue {
        .array(catalogs.languages.map { code in
            .object([
                "code": .string(code), "name": .string(catalogs.format("language.name", language: code)),
                "href": .string("\(path)lang=\(code)"), "current": .bool(code == current),
            ])
        })
    }

    /// An email address as HTML that may wrap after the local part and before a dot of the domain, but never
    /// inside a label such as `.com`; a very long local part may still wrap anywhere rather than overflow.
    package static func emailHTML(_ email: String) -> String {
        guard let at = email.lastIndex(of: "@") else { return "<span class=\"email-part\">\(escape(email))</span>" }
        let local = email[..<at]
        let labels = email[email.index(after: at)...].split(separator: ".", omittingEmptySubsequences: false)
        var html = "<span class=\"email-local\">\(escape(String(local)))</span><wbr>"
        for (index, label) in labels.enumerated() {
            let text = (index == 0 ? "@" : ".") + label
            html += (index == 0 ? "" : "<wbr>") + "<span class=\"email-part\">\(escape(text))</span>"
        }
        return html
    }

    package static func escape(_ text: String) -> String { htmlEscaped(text) }

    /// A moment given as seconds since 1970, or in the "2026-12-01 03:04:05 UTC" display form.
    package static func date(_ value: MustacheValue?) -> Date? {
        switch value {
        case .int(let seconds)?: Date(timeIntervalSince1970: TimeInterval(seconds))
        case .double(let seconds)?: Date(timeIntervalSince1970: seconds)
        case .string(let text)?: parseDisplayTime(text)
        default: nil
        }
    }

    package static func parseDisplayTime(_ text: String) -> Date? {
        guard text.hasSuffix(" UTC") else { return nil }
        let iso = text.dropLast(4).replacingOccurrences(of: " ", with: "T") + "Z"
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: iso)
    }
}
