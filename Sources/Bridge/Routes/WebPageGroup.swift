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

    /// A page anyone may open that also sees the visitor's session, if any.
    func page(visiting handler: @escaping @Sendable (Request, SignedInVisit?) throws -> Response) -> Router.Handler {
        let sessions = sessions
        return page { request in try handler(request, try sessions.visit(request)) }
    }

    typealias VisitHandler = @Sendable (Request, SignedInVisit) throws -> Response

    /// A page of a signed-in person. Without a live session the request goes to `signedOut` (the login page unless
    /// told otherwise). With `csrfRefusal`, a post without the session's CSRF token is refused with it, or answered
    /// by `csrfMismatch` when given (e.g. a page that asks again with a fresh token).
    func signedIn(csrfRefusal: PageRefusal? = nil, csrfMismatch: VisitHandler? = nil,
                  signedOut: @escaping Router.Handler = { _ in .redirect(to: "/login") },
                  _ handler: @escaping VisitHandler) -> Router.Handler {
        let sessions = sessions
        return page { request in
            // After a suspension the rest of the work runs as it was: the session may be the one it just ended.
            if let rest = request.takeResumedWork() { return try rest() }
            if CookieNames.duplicated(in: request) != nil { throw PageRefusal.duplicateCookie }
            guard let visit = try sessions.visit(request) else { return try signedOut(request) }
            if let csrfRefusal, !sessions.carriesCSRFToken(request, of: visit) {
                guard let csrfMismatch else { throw csrfRefusal }
                return try csrfMismatch(request, visit)
            }
            return try handler(request, visit)
        }
    }
}
