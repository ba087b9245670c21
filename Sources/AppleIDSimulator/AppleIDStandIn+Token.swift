import Foundation
import HTTPServer
import JOSE
import JSON

extension AppleIDStandIn {
    static let accessTokenLifetime = 3600

    /// `POST /auth/token`: exchanges an authorization code or a refresh token, or grants a user migration access
    /// token (`client_credentials`).
    func exchangeToken(_ request: Request) throws -> Response {
        do {
            guard let form = request.formBody else {
                throw OAuthError.invalidRequest("The body must be application/x-www-form-urlencoded.")
            }
            switch form["grant_type"] {
            case "authorization_code":
                return try redeemAuthorizationCode(form, clientID: authenticateClient(form))
            case "refresh_token":
                return try redeemRefreshToken(form, clientID: authenticateClient(form))
            case "client_credentials":
                return Self.tokenResponse(try issueMigrationAccessToken(form, clientID: authenticateClient(form)))
            case nil, "":
                throw OAuthError.invalidRequest("The request has no grant_type.")
            default:
                throw OAuthError(code: "unsupported_grant_type", description: "The grant_type is not supported.")
            }
        } catch let error as OAuthError {
            logger.info("simulator_token_refused", ["error": error.code])
            return error.response
        }
    }

    /// The client_id, once its client_secret passed. Shared with `/auth/revoke`.
    func authenticateClient(_ form: FormFields) throws(OAuthError) -> String {
        guard let clientID = form["client_id"], !clientID.isEmpty else {
            throw .invalidClient("The request has no client_id.")
        }
        guard let secret = form["client_secret"], !secret.isEmpty else {
            throw .invalidClient("The request has no client_secret.")
        }
        let now = clock()
        guard state.withLock({ $0.clientSecrets.isValid(secret: secret, clientID: clientID, now: now) }) else {
            throw .invalidClient("The client_secret is not a valid client secret for this client.")
        }
        return clientID
    }

    private func redeemAuthorizationCode(_ form: FormFields, clientID: String) throws -> Response {
        guard let code = form["code"], !code.isEmpty else { throw OAuthError.invalidRequest("The request has no code.") }
        let now = clock()
        guard let grant = state.withLock({ $0.grants.redeemCode(code, now: now) }),
              grant.consent.clientID == clientID
        else { throw OAuthError.invalidGrant("The code has expired or has been revoked.") }
        // As Apple does: a code issued through a redirect URI is only exchanged with that same one, byte for byte.
        if let boundRedirect = grant.redirectURI, !(form["redirect_uri"] ?? "").utf8.elementsEqual(boundRedirect.utf8) {
            throw OAuthError.invalidGrant("The redirect_uri does not match the one of the authorization.")
        }
        let refreshToken = OpaqueToken.make(.refreshToken)
        state.withLock { $0.grants.addToken(refreshToken, IssuedToken(kind: .refresh, consent: grant.consent)) }
        var body = try issueAccessToken(for: grant.consent)
        body["refresh_token"] = .string(refreshToken)
        logger.info("simulator_code_exchanged", ["client_id": clientID, "sub": grant.consent.user.sub])
        return Self.tokenResponse(body)
    }

    private func redeemRefreshToken(_ form: FormFields, clientID: String) throws -> Response {
        guard let refreshToken = form["refresh_token"], !refreshToken.isEmpty else {
            throw OAuthError.invalidRequest("The request has no refresh_token.")
        }
        guard let consent = state.withLock({ $0.grants.consent(forRefreshToken: refreshToken) }),
              consent.clientID == clientID
        else { throw OAuthError.invalidGrant("The refresh token is invalid or has been revoked.") }
        logger.info("simulator_token_refreshed", ["client_id": clientID, "sub": consent.user.sub])
        return Self.tokenResponse(try issueAccessToken(for: consent))
    }

    /// A new access token and the identity token that comes with it: no nonce, `at_hash` of the access token.
    private func issueAccessToken(for consent: Consent) throws -> [String: JSONValue] {
        let accessToken = OpaqueToken.make(.accessToken)
        state.withLock { $0.grants.addToken(accessToken, IssuedToken(kind: .access, consent: consent)) }
        var claims = IdentityTokenClaims(audience: consent.clientID, subject: currentSubject(of: consent.user),
                                         email: consent.sharedEmail, isPrivateEmail: consent.isPrivateEmail,
                                         issuedAt: clock())
        claims.transferSubject = currentTransferSubject(of: consent.user)
        claims.issuer = issuer
        claims.accessToken = accessToken
        claims.authTime = consent.authTime
        claims.realUserStatus = nil
        return [
            "access_token": .string(accessToken),
            "token_type": "Bearer",
            "expires_in": .integer(Self.accessTokenLifetime),
            "id_token": .string(try mintIdentityToken(claims)),
        ]
    }

    private static func tokenResponse(_ body: [String: JSONValue]) -> Response {
        var response = Response.json(JSONValue.object(body).serialized())
        response.headers.set("Cache-Control", "no-store")
        response.headers.set("Pragma", "no-cache")
        return response
    }
}
