import AppleID
import BridgeSettings
import Foundation
import HTTPServer
import JOSE
import Logging
import SignIn
import Storage
import WebPresentation

/// Group invitations (docs/forward-auth.md): the single-use link `invite` prints, `GET /invite?token=…`, which keeps
/// the token for this browser's sign-in in a cookie and sends the person to the login page, and the spending of it
/// inside that sign-in's own transaction, where the member joins the group.
///
/// The token is the secret: only its digest is stored, and the cookie holds it only until the callback it is
/// scoped to. An invitation that cannot be spent any more by then (another person's sign-in spent it first, or it
/// expired meanwhile) does not stop the sign-in: the person is signed in, without the group.
package struct Invitations: Sendable {
    /// Only the callback reads it. SameSite=None: Apple's form_post is a cross-site POST.
    package static let cookieName = "asb_invite"
    package static let cookiePath = "/apple_redirect"
    /// Long enough to read the login page and go through Apple's; the invitation's own expiry still applies.
    package static let cookieLifetime = 1800
    package static let defaultLifetime: TimeInterval = 7 * 86_400
    package static let longestLifetime: TimeInterval = 365 * 86_400

    /// What it reads and writes of the store.

    package typealias StoreRole = any MemberGroupsTransaction

    package let store: StoreAccess<StoreRole>
    package let clock: WallClock
    package let logger: Logger

    package init(store: StoreAccess<StoreRole>, clock: WallClock, logger: Logger) {
        self.store = store
        self.clock = clock
        self.logger = logger
    }

    /// `GET /invite?token=T[&return_to=U]`: a waiting invitation's cookie, and `303` to the login page (with the
    /// `return_to`, which the login page checks); a token that names no waiting invitation is refused with a page.
    package func open(_ request: Request) throws -> Response {
        guard let token = request.query["token"], Self.isTokenShaped(token) else { throw PageRefusal.invitationUnusable }
        let now = clock.now
        guard let invitation = try store.readOneStatement({ try $0.groupInvitation(tokenHash: SecretTokens.digest(token)) }),
              invitation.redeemedAt == nil, invitation.expiresAt > now else {
            throw PageRefusal.invitationUnusable
        }
        var login = "/login"
        if let returnTo = request.query["return_to"] { login += "?" + FormFields([("return_to", returnTo)]).urlEncoded }
        var response = Response.redirect(to: login)
        response.headers.set("Cache-Control", "no-store")
        response.setCookie(Cookie(name: Self.cookieName, value: token, path: Self.cookiePath, maxAge: Self.cookieLifetime,
                                  secure: true, httpOnly: true, sameSite: .none))
        return response
    }

    /// The sign-in's write for this browser's invitation, run after `then` (an OpenID client's code) in the sign-in's
    /// transaction; `then` itself when the browser carries none.
    package func spending(_ request: Request, then other: (@Sendable (any StoreTransaction, User) throws -> Void)?)
        -> (@Sendable (any StoreTransaction, User) throws -> Void)? {
        guard let token = request.cookie(Self.cookieName), Self.isTokenShaped(token) else { return other }
        let (tokenHash, now, logger) = (SecretTokens.digest(token), clock.now, logger)
        return { transaction, user in
            try other?(transaction, user)
            switch try transaction.redeemGroupInvitation(tokenHash: tokenHash, userID: user.id, now: now) {
            case let .joined(group):
                logger.info("invitation_redeemed", ["user_id": String(user.id), "group": group])
            case .unknown, .expired, .alreadyUsed:
                logger.info("invitation_not_redeemed", ["user_id": String(user.id)])
            }
        }
    }

    /// The cookie, forgotten once a sign-in took it along.
    package static func expiredCookie(_ request: Request) -> Cookie? {
        request.cookie(cookieName) == nil ? nil : .expired(cookieName, path: cookiePath, sameSite: .none)
    }

    /// A new invitation into `group`, valid for `lifetime`: the link to hand to one person, and its expiry.
    package static func create(group: String, lifetime: TimeInterval, publicURL: String, store: any Store,
                               now: Date) throws -> (link: String, expiresAt: Date) {
        let token = SecretTokens.random()
        let expiresAt = now.addingTimeInterval(lifetime)
        try store.write { transaction in
            try transaction.insertGroupInvitation(GroupInvitation(tokenHash: SecretTokens.digest(token), groupName: group,
                                                                  createdAt: now, expiresAt: expiresAt))
        }
        return (publicURL + "/invite?" + FormFields([("token", token)]).urlEncoded, expiresAt)
    }

    /// `7d`, `12h`, `30m`, `90s`: a positive whole number and a unit, up to a year.
    package static func lifetime(_ text: String?) -> TimeInterval? {
        guard let text else { return defaultLifetime }
        let units: [UInt8: TimeInterval] = [UInt8(ascii: "s"): 1, UInt8(ascii: "m"): 60, UInt8(ascii: "h"): 3600,
                                            UInt8(ascii: "d"): 86_400]
        guard let unit = text.utf8.last.flatMap({ units[$0] }),
              let count = Int(String(decoding: text.utf8.dropLast(), as: UTF8.self)), count > 0,
              TimeInterval(count) * unit <= longestLifetime else { return nil }
        return TimeInterval(count) * unit
    }

    /// What `SecretTokens.random()` makes: 32 bytes in base64url, 43 characters.
    package static func isTokenShaped(_ token: String) -> Bool {
        token.utf8.count == 43 && Base64URL.decode(token)?.count == 32
    }
}
