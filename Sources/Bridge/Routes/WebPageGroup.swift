import HTTPServer

/// Pages for people: any error becomes an HTML error page; a signed-in page gets the session from its cookie (and
/// refuses a request carrying two of it) and, when it takes a form, refuses a post without the session's CSRF token.
struct WebPageGroup: Sendable {
    let errors: ErrorMapping<WebErrorPresenter>
    let sessions: BrowserSessions

    /// A page anyone may open.
    func page(_ handler: @escaping Router.Handler) -> Router.Handler {
        { [errors] request in try errors.respond(to: request, with: handler) }
    }

    /// A page of a signed-in person. Without a live session the request goes to `signedOut` (the login page unless
    /// told otherwise). With `csrfRefusal`, a post without the session's CSRF token is refused with it.
    func signedIn(csrfRefusal: PageRefusal? = nil,
                  signedOut: @escaping Router.Handler = { _ in .redirect(to: "/login") },
                  _ handler: @escaping @Sendable (Request, SignedInVisit) throws -> Response) -> Router.Handler {
        let sessions = sessions
        return page { request in
            if CookieNames.duplicated(in: request) != nil { throw PageRefusal.duplicateCookie }
            guard let visit = try sessions.visit(request) else { return try signedOut(request) }
            if let csrfRefusal, !sessions.carriesCSRFToken(request, of: visit) { throw csrfRefusal }
            return try handler(request, visit)
        }
    }
}
