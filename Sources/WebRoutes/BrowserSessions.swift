import AppleID
import BridgeSettings
import Foundation
import HTTPServer
import JOSE
import SignIn
import Storage

/// A request from a browser with a live session: the session, its user, and the CSRF token its forms carry.
package struct SignedInVisit: Sendable {
    package let session: Session
    package let user: User
    package let csrfToken: String

    package init(session: Session, user: User, csrfToken: String) {
        self.session = session
        self.user = user
        self.csrfToken = csrfToken
    }
}

/// Browser sessions: the cookie that names one, the session it names, and the CSRF token derived from it.
package struct BrowserSessions: Sendable {
    /// What it reads and writes of the store.
    package typealias StoreRole = any SessionTransaction
    package let store: StoreAccess<StoreRole>
    package let clock: WallClock
    package let csrfKey: [UInt8]
    package let cookieNames: CookieNames

    package init(store: StoreAccess<StoreRole>, clock: WallClock, csrfKey: [UInt8], cookieNames: CookieNames) {
        self.store = store
        self.clock = clock
        self.csrfKey = csrfKey
        self.cookieNames = cookieNames
    }

    /// The signed-in visit of this request, if its cookie names a live session.
    package func visit(_ request: Request) throws -> SignedInVisit? {
        guard let id = request.cookie(cookieNames.session), !id.isEmpty else { return nil }
        let now = clock.now
        guard let (session, user) = try store.readOneStatement({ try $0.session(idHash: SecretTokens.digest(id), now: now) }) else {
            return nil
        }
        return SignedInVisit(session: session, user: user, csrfToken: csrfToken(for: session))
    }

    /// Whether a form post carries the CSRF token of this visit's session.
    package func carriesCSRFToken(_ request: Request, of visit: SignedInVisit) -> Bool {
        guard let presented = request.formBody?["csrf"] else { return false }
        return ConstantTime.equals(presented, visit.csrfToken)
    }

    /// A CSRF token tied to the session, derived rather than stored.
    package func csrfToken(for session: Session) -> String {
        Base64URL.encode(HMACSHA256.authenticate(key: csrfKey, message: Array("csrf:\(session.idHash)".utf8)))
    }

    package func cookie(sessionID: String) -> Cookie {
        cookieNames.sessionCookie(id: sessionID, lifetime: Int(SessionIssuer.browserSessionLifetime))
    }
}
