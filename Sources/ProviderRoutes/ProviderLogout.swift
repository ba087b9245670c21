import BridgeSettings
import Foundation
import HTTPServer
import Logging
import Mustache
import OpenIDProvider
import SignIn
import Storage
import TextBytes
import WebPresentation
import WebRoutes

/// OpenID Connect RP-Initiated Logout 1.0: `GET` and `POST` at the `end_session_endpoint`. A relying party sends the
/// browser here to sign it out of the bridge too, and names where it goes afterwards: a `post_logout_redirect_uri`
/// registered for the client, with its `state`. An `id_token_hint` naming the signed-in member signs out at once;
/// without one the person is asked (a cross-site link must not sign anyone out by itself).
package struct ProviderLogout: Sendable {
    package let configuration: BridgeConfiguration
    /// What it reads and writes of the store.
    package typealias StoreRole = any SessionTransaction
    package let store: StoreAccess<StoreRole>
    package let sessions: BrowserSessions
    package let idTokens: ProviderTokens
    package let keys: ProviderKeyRing
    package let pages: Pages
    package let logger: Logger

    package init(configuration: BridgeConfiguration, store: StoreAccess<StoreRole>, sessions: BrowserSessions,
                 idTokens: ProviderTokens, keys: ProviderKeyRing, pages: Pages, logger: Logger) {
        self.configuration = configuration
        self.store = store
        self.sessions = sessions
        self.idTokens = idTokens
        self.keys = keys
        self.pages = pages
        self.logger = logger
    }

    package static let parameters = ["id_token_hint", "client_id", "post_logout_redirect_uri", "state"]

    package func endSession(_ request: Request, _ visit: SignedInVisit?) throws -> Reply {
        let parameters = try ProviderAuthorizationFlow.parameters(of: request)
        if let repeated = parameters.repeatedNames.intersection(Self.parameters).sorted().first {
            return Reply(refusal("The sign-out link names \(repeated) more than once, so nothing was done."))
        }
        var hint: IDTokenHint?
        if let token = parameters["id_token_hint"], !token.isEmpty {
            hint = idTokens.idTokenHint(token, publicKey: keys.publicKey)
            if hint == nil { return Reply(refusal("The app that sent you here gave a sign-in token this service did not issue, so nothing was done.")) }
        }
        let named = parameters["client_id"].flatMap { $0.isEmpty ? nil : $0 }
        if let named, let hint, !named.hasSameUTF8(as: hint.audience) {
            return Reply(refusal("The sign-out link names one app and carries another app's sign-in token, so nothing was done."))
        }
        var afterwards = SessionPages.signedOutURL
        if let uri = parameters["post_logout_redirect_uri"], !uri.isEmpty {
            guard let clientID = named ?? hint?.audience, let client = configuration.clients.client(clientID),
                  client.allowsPostLogoutRedirect(to: uri) else {
                return Reply(refusal("The app that sent you here asked to return to an address it has not registered for after signing out, so nothing was done."))
            }
            afterwards = parameters["state"].map { RedirectURI.appending([("state", $0)], to: uri) } ?? uri
        }
        guard let visit else { return Reply(Self.redirect(to: afterwards)) }  // nobody is signed in here: nothing to end
        let confirmed = hint.map { $0.memberID == visit.user.id } ?? false
            || (request.method.hasSameUTF8(as: "POST") && sessions.carriesCSRFToken(request, of: visit))
        guard confirmed else { return Reply(confirmation(parameters, visit)) }
        let (idHash, userID, cookieName, destination) = (visit.session.idHash, visit.session.userID,
                                                         configuration.cookieNames.session, afterwards)
        return request.answer(afterWriting: { try $0.deleteSession(idHash: idHash) }, to: store) { [logger] _ in
            logger.info("signed_out", ["user_id": String(userID), "flow": "end_session"])
            var response = Self.redirect(to: destination)
            response.setCookie(.expired(cookieName))
            return response
        }
    }

    /// "Sign out?": the same request posted back with the session's CSRF token.
    package func confirmation(_ parameters: FormFields, _ visit: SignedInVisit) -> Response {
        let fields: [MustacheValue] = Self.parameters.compactMap { name in
            parameters[name].map { .object(["name": .string(name), "value": .string($0)]) }
        }
        return pages.error(status: 200, reason: "end_session_confirm", action: nil, extra: [
            "isFailure": false,
            "signOut": .object(["csrfToken": .string(visit.csrfToken), "formAction": .string(ProviderEndpoints.endSession),
                                "hiddenFields": .array(fields)]),
        ])
    }

    package func refusal(_ message: String) -> Response {
        pages.error(status: 400, heading: "This sign-out link is not valid", message: message, retryURL: nil)
    }

    package static func redirect(to destination: String) -> Response {
        var response = Response.redirect(to: destination)
        response.headers.set("Cache-Control", "no-store")
        return response
    }
}
