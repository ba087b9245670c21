import BridgeSettings
import HTTPServer

/// Where a browser lands once its sign-in committed, and with which cookies: the session's, with the invitation
/// cookie expired. The attempt's binding and `return_to` cookies stay until they expire with the attempt: they are
/// how a repeated post of the same callback from this browser is told from another browser's, and where it lands
/// (`RepeatedCallback`).
package struct SignedInLanding: Sendable {
    package let sessions: BrowserSessions
    package let returnDestination: ReturnDestination
    /// The invitation this browser's sign-in spends, if it carries one.
    package let invitations: Invitations
    /// Where a sign-in lands without an allowed `return_to` (`BRIDGE_AFTER_SIGN_IN_URL`).
    package let afterSignInURL: String

    package init(sessions: BrowserSessions, returnDestination: ReturnDestination, invitations: Invitations,
                 afterSignInURL: String) {
        self.sessions = sessions
        self.returnDestination = returnDestination
        self.invitations = invitations
        self.afterSignInURL = afterSignInURL
    }

    package var cookieNames: CookieNames { sessions.cookieNames }

    /// The allowed `return_to` the login attempt kept, else `BRIDGE_AFTER_SIGN_IN_URL`.
    package func destination(_ request: Request, stateDigest: String) -> Response {
        .redirect(to: returnDestination.destination(request, stateDigest: stateDigest) ?? afterSignInURL)
    }

    /// `response` (where a finished sign-in goes) with the session cookie.
    package func response(_ request: Request, sessionID: String, _ response: Response) -> Response {
        var response = response
        response.setCookie(sessions.cookie(sessionID: sessionID))
        if let invitation = Invitations.expiredCookie(request) { response.setCookie(invitation) }
        return response
    }
}
