import HTTPServer

/// Where a browser lands once its sign-in committed, and with which cookies: the session's, with the login
/// attempt's binding cookie, `return_to` cookie and invitation cookie expired.
struct SignedInLanding: Sendable {
    let sessions: BrowserSessions
    let returnDestination: ReturnDestination
    /// The invitation this browser's sign-in spends, if it carries one.
    let invitations: Invitations
    /// Where a sign-in lands without an allowed `return_to` (`BRIDGE_AFTER_SIGN_IN_URL`).
    let afterSignInURL: String

    var cookieNames: CookieNames { sessions.cookieNames }

    /// The allowed `return_to` the login attempt kept, else `BRIDGE_AFTER_SIGN_IN_URL`.
    func destination(_ request: Request, stateDigest: String) -> Response {
        .redirect(to: returnDestination.destination(request, stateDigest: stateDigest) ?? afterSignInURL)
    }

    /// `response` (where a finished sign-in goes) with the session cookie, and the attempt's cookies expired.
    func response(_ request: Request, sessionID: String, stateDigest: String, _ response: Response) -> Response {
        var response = response
        response.setCookie(sessions.cookie(sessionID: sessionID))
        response.setCookie(.expired(cookieNames.binding(forStateDigest: stateDigest), path: "/", sameSite: .none))
        if request.cookie(ReturnDestination.cookieName(forStateDigest: stateDigest)) != nil {
            response.setCookie(returnDestination.expiredCookie(stateDigest: stateDigest))
        }
        if let invitation = Invitations.expiredCookie(request) { response.setCookie(invitation) }
        return response
    }
}
