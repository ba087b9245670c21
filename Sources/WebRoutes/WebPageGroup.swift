import BridgeSettings
import HTTPServer
import Localization
import WebPresentation

/// Pages for people: any error becomes an HTML error page in the request's language; a signed-in page gets the
/// session from its cookie (and refuses a request carrying two of it) and, when it takes a form, refuses a post
/// without the session's CSRF token. Its group answers every path no other group owns.
package struct WebPageGroup: Sendable {
    package let group: RouteGroup
    package let sessions: BrowserSessions

    package init(answers: PageAnswers, sessions: BrowserSessions) {
        group = RouteGroup("pages", answers)
        self.sessions = sessions
    }

    /// A page anyone may open.
    package func page(_ handler: @escaping Router.Handler) -> Router.Route { group.route(handler) }

    /// A page anyone may open that also sees the visitor's session, if any.
    package func page(visiting handler: @escaping @Sendable (Request, SignedInVisit?) throws -> Reply) -> Router.Route {
        let sessions = sessions
        return group.route(replying: { request in try handler(request, try sessions.visit(request)) })
    }

    package typealias VisitHandler = @Sendable (Request, SignedInVisit) throws -> Reply

    /// A page of a signed-in person. Without a live session the request goes to `signedOut` (the login page unless
    /// told otherwise). With `csrfRefusal`, a post without the session's CSRF token is refused with it, or answered
    /// by `csrfMismatch` when given (e.g. a page that asks again with a fresh token).
    package func signedIn(csrfRefusal: PageRefusal? = nil, csrfMismatch: (@Sendable (Request, SignedInVisit) throws -> Response)? = nil,
                          signedOut: @escaping Router.Handler = { _ in .redirect(to: "/login") },
                          _ handler: @escaping VisitHandler) -> Router.Route {
        let sessions = sessions
        return group.route(replying: { request in
            if CookieNames.duplicated(among: request.sentCookies) != nil { throw PageRefusal.duplicateCookie }
            guard let visit = try sessions.visit(request) else { return Reply(try signedOut(request)) }
            if let csrfRefusal, !sessions.carriesCSRFToken(request, of: visit) {
                guard let csrfMismatch else { throw csrfRefusal }
                return Reply(try csrfMismatch(request, visit))
            }
            return try handler(request, visit)
        })
    }
}

/// How every page answers: in the request's language (`?lang=`, the remembered choice, or `Accept-Language`), and
/// any error as the error page.
package struct PageAnswers: RouteMiddleware {
    package let errors: ErrorMapping<WebErrorPresenter>
    package let languages: LanguageNegotiation

    package init(errors: ErrorMapping<WebErrorPresenter>, languages: LanguageNegotiation) {
        self.errors = errors
        self.languages = languages
    }

    package func respond(to request: Request, next: (Request) -> Reply) -> Reply {
        LanguageSelection<Router>.respond(to: request, negotiation: languages) { request in
            errors.respond(to: request, next: next)
        }
    }
}

extension WebPageGroup {
    /// The pages' routes; every path no other group owns is a page too (`Router(fallback:)`).
    package func register(on router: inout Router, login: LoginPage, sessions: SessionPages, invitations: Invitations) {
        router.add("GET", "/", page { _ in .redirect(to: "/login") })
        router.add("GET", "/login", page(visiting: login.show))
        router.add("GET", "/session", signedIn(sessions.show))
        router.add("POST", "/logout", signedIn(csrfRefusal: .signOutNotFromThisSite, csrfMismatch: sessions.confirmSignOut,
                                               signedOut: sessions.logoutWithoutSession, sessions.logout))
        router.add("POST", "/account/delete", signedIn(csrfRefusal: .deletionNotFromThisSite, sessions.deleteAccount))
        router.add("GET", "/invite", page(invitations.open))
    }
}
