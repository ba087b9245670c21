import AppleID
import Foundation
import HTTPServer
import JOSE
import Storage

/// A request from a browser with a live session: the session, its user, and the CSRF token its forms carry.
struct SignedInVisit: Sendable {
    let session: Session
    let user: User
    let csrfToken: String
}

/// Browser sessions: the cookie that names one, the session it names, and the CSRF token derived from it.
struct BrowserSessions: Sendable {
    let store: any Store
    let clock: WallClock
    let csrfKey: [UInt8]
    let cookieNames: CookieNames

    /// The signed-in visit of this request, if its cookie names a live session.
    func visit(_ request: Request) throws -> SignedInVisit? {
        guard let id = request.cookie(cookieNames.session), !id.isEmpty else { return nil }
        let now = clock.now
        guard let (session, user) = try store.readOneStatement({ try $0.session(idHash: SecretTokens.digest(id), now: now) }) else {
            return nil
        }
        return SignedInVisit(session: session, user: user, csrfToken: csrfToken(for: session))
    }

    /// Whether a form post carries the CSRF token of this visit's session.
    func carriesCSRFToken(_ request: Request, of visit: SignedInVisit) -> Bool {
        guard let presented = request.formBody?["csrf"] else { return false }
        return ConstantTime.equals(presented, visit.csrfToken)
    }

    /// A CSRF token tied to the session, derived rather than stored.
    func csrfToken(for session: Session) -> String {
        Base64URL.encode(HMACSHA256.authenticate(key: csrfKey, message: Array("csrf:\(session.idHash)".utf8)))
    }

    func cookie(sessionID: String) -> Cookie {
        cookieNames.sessionCookie(id: sessionID, lifetime: Int(SessionIssuer.browserSessionLifetime))
    }
}
