import HTTPServer
import Localization

/// The language of the pages rendered while answering one request. `LanguageSelection` sets it; `Pages`
/// reads it when a caller does not name a language.
public enum PageLanguage {
    @TaskLocal public static var current: String?

    /// The cookie that remembers a language picked with `?lang=`.
    public static let cookieName = "asb_lang"
    package static let cookieLifetime = 365 * 86_400
}

/// Chooses each request's page language — `?lang=` (then remembered in a cookie), the remembered choice, or
/// the best `Accept-Language` match — and renders the rest of the chain in it.
public struct LanguageSelection<Next: HTTPResponder>: HTTPResponder {
    public let next: Next
    public let negotiation: LanguageNegotiation

    public init(_ next: Next, negotiation: LanguageNegotiation) {
        self.next = next
        self.negotiation = negotiation
    }

    public func respond(to request: Request) -> Reply {
        Self.respond(to: request, negotiation: negotiation) { next.respond(to: $0) }
    }

    /// Runs `handler`, and whatever of its reply follows later, with the request's page language, then marks an
    /// HTML answer with it.
    package static func respond(to request: Request, negotiation: LanguageNegotiation, _ handler: (Request) -> Reply) -> Reply {
        let picked = request.query["lang"].flatMap { negotiation.match($0, allowPrefix: false) }
        let language = negotiation.choose(explicit: picked, remembered: request.cookie(PageLanguage.cookieName),
                                          acceptLanguage: request.headers["Accept-Language"])
        // The choice to remember, when it is not remembered yet.
        let remember = picked.flatMap { $0 != request.cookie(PageLanguage.cookieName) ? $0 : nil }
        return PageLanguage.$current.withValue(language) { handler(request) }
            .within { rest in PageLanguage.$current.withValue(language) { rest() } }
            .map { response in mark(response, language: language, remembering: remember) }
    }

    private static func mark(_ response: Response, language: String, remembering picked: String?) -> Response {
        var response = response
        if let picked {
            response.setCookie(Cookie(name: PageLanguage.cookieName, value: picked, path: "/",
                                      maxAge: PageLanguage.cookieLifetime, sameSite: .lax))
        }
        if response.isHTML {
            response.headers.set("Content-Language", language)
            response.headers.add("Vary", "Accept-Language, Cookie")
        }
        return response
    }
}
