import BridgeSettings
import Foundation
import HTTPServer
import Logging
import Mustache
import SignIn
import Storage
import WebPresentation

/// The signed-in person's pages: `GET /session`, `POST /logout` and `POST /account/delete`.
package struct SessionPages: Sendable {
    /// What it reads and writes of the store.
    package typealias StoreRole = any SessionTransaction
    package let store: StoreAccess<StoreRole>
    package let cookieNames: CookieNames
    package let pages: Pages
    package let accountDeletion: AccountDeletion
    package let logger: Logger

    package init(store: StoreAccess<StoreRole>, cookieNames: CookieNames, pages: Pages, accountDeletion: AccountDeletion,
                 logger: Logger) {
        self.store = store
        self.cookieNames = cookieNames
        self.pages = pages
        self.accountDeletion = accountDeletion
        self.logger = logger
    }

    package func show(_ request: Request, _ visit: SignedInVisit) throws -> Reply {
        let (session, user) = (visit.session, visit.user)
        var userContext: [String: MustacheValue] = [
            "sub": .string(user.providerUserID), "emailVerified": .bool(user.emailVerified),
            "isPrivateEmail": .bool(user.isPrivateEmail),
        ]
        if let email = user.email { userContext["email"] = .string(email) }
        if let name = user.displayName, !name.isEmpty { userContext["displayName"] = .string(name) }
        let flow = session.signInFlow
        return Reply(pages.render("session", [
            "user": .object(userContext), "flow": .string(flow.rawValue), "nonceVerified": .bool(session.nonceVerified),
            "signedInAt": .double(session.createdAt.timeIntervalSince1970), "csrfToken": .string(visit.csrfToken),
        ]))
    }

    package func logout(_ request: Request, _ visit: SignedInVisit) throws -> Reply {
        let idHash = visit.session.idHash
        return request.answer(afterWriting: { try $0.deleteSession(idHash: idHash) }, to: store) { [self] _ in
            logger.info("signed_out", ["user_id": String(visit.session.userID)])
            var response = Response.redirect(to: Self.signedOutURL)
            response.setCookie(cookieNames.expiredSessionCookie)
            return response
        }
    }

    /// The login page, saying "You are signed out".
    package static let signedOutURL = "/login?signed_out=1"

    /// A sign-out from a stale tab (or another site) carries no valid CSRF token: nothing happens, and the page
    /// explains why and offers a Sign out button that works.
    package func confirmSignOut(_ request: Request, _ visit: SignedInVisit) -> Response {
        pages.error(status: 403, reason: "sign_out_refused", action: nil,
                    extra: ["signOut": .object(["csrfToken": .string(visit.csrfToken)]), "isFailure": false])
    }

    /// Signing out without a live session: only forget a cookie the browser actually sent (a stale one);
    /// a cross-site form sends none.
    package func logoutWithoutSession(_ request: Request) -> Response {
        var response = Response.redirect(to: Self.signedOutURL)
        if request.cookie(cookieNames.session) != nil { response.setCookie(cookieNames.expiredSessionCookie) }
        return response
    }

    /// A confirmation page first; with `confirm=yes`, the deletion.
    package func deleteAccount(_ request: Request, _ visit: SignedInVisit) throws -> Reply {
        guard request.formBody?["confirm"] == "yes" else {
            var userContext: [String: MustacheValue] = [:]
            if let name = visit.user.displayName { userContext["displayName"] = .string(name) }
            if let email = visit.user.email { userContext["email"] = .string(email) }
            return Reply(pages.render("account-delete", ["csrfToken": .string(visit.csrfToken), "user": .object(userContext)]))
        }
        return try accountDeletion.reply(deleting: visit.user.id) { [pages, cookieNames] result in
            var response = pages.render("account-deleted", [
                "revoked": .bool(result == .revoked), "revocationPending": .bool(result == .queued),
                "nothingToRevoke": .bool(result == .none),
            ])
            response.setCookie(cookieNames.expiredSessionCookie)
            return response
        }
    }
}
