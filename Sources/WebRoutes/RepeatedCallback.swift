import HTTPServer
import OpenIDProvider
import SignIn
import Storage

/// A callback posted again by the browser whose sign-in it already finished (the back button to Apple's page, a
/// second tap, a webview posting twice): that browser, still signed in, lands where the first post sent it, and
/// nothing is written. Without a live session it is refused as a used sign-in.
package struct RepeatedCallback: Sendable {
    package let sessions: BrowserSessions
    package let landing: SignedInLanding

    package init(sessions: BrowserSessions, landing: SignedInLanding) {
        self.sessions = sessions
        self.landing = landing
    }

    /// A web sign-in's destination (its allowed `return_to`, else BRIDGE_AFTER_SIGN_IN_URL); for an OpenID client's,
    /// its authorization request again, which the session now answers with a fresh code.
    package func land(_ request: Request, stateDigest: String, authorization: ProviderAuthorization?) throws -> Response {
        guard try sessions.visit(request) != nil else { throw SignInFailure.loginAttemptAlreadyUsed }
        guard let authorization else { return landing.destination(request, stateDigest: stateDigest) }
        var response = Response.redirect(to: Self.authorizationRequest(authorization))
        response.headers.set("Cache-Control", "no-store")
        return response
    }

    /// The authorization request `authorization` was stored from.
    package static func authorizationRequest(_ authorization: ProviderAuthorization) -> String {
        var query: [(String, String)] = [
            ("client_id", authorization.clientID), ("redirect_uri", authorization.redirectURI),
            ("response_type", "code"), ("scope", authorization.scope),
        ]
        if let state = authorization.clientState { query.append(("state", state)) }
        if let nonce = authorization.nonce { query.append(("nonce", nonce)) }
        if let challenge = authorization.codeChallenge {
            query += [("code_challenge", challenge), ("code_challenge_method", PKCE.method)]
        }
        if authorization.responseMode != ResponseMode.query.rawValue { query.append(("response_mode", authorization.responseMode)) }
        return ProviderEndpoints.authorization + "?" + FormFields(query).urlEncoded
    }
}
