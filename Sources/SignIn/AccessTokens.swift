import BridgeSettings
import Foundation
import JOSE
import JSON
import OpenIDProvider

/// The service's own access tokens: RFC 9068 JWTs (`typ: at+jwt`, RS256) signed with the OpenID provider's keys, so
/// other backends can check them against the published JWKS without any secret. An Apple identity token (no such
/// `typ`, Apple's keys) is never taken for one. Each names its session (`sid`), which this server checks on every call.
package struct AccessTokens: Sendable {
    /// The `client_id` claim of tokens issued through the JSON API.
    package static let apiClientID = BridgeConfiguration.jsonAPIClientID
    package let keys: ProviderKeyRing
    package let tokens: ProviderTokens
    package let lifetime: TimeInterval

    package init(keys: ProviderKeyRing, issuer: String, lifetime: TimeInterval) {
        self.keys = keys
        tokens = ProviderTokens(issuer: issuer)
        self.lifetime = lifetime
    }

    package struct Claims: Equatable {
        package var userID: Int64
        package var sessionIDHash: String
        package var clientID: String
        package var scopes: [String]
        package var expiresAt: Date

        package init(userID: Int64, sessionIDHash: String, clientID: String, scopes: [String], expiresAt: Date) {
            self.userID = userID
            self.sessionIDHash = sessionIDHash
            self.clientID = clientID
            self.scopes = scopes
            self.expiresAt = expiresAt
        }
    }

    package func issue(userID: Int64, sessionIDHash: String, clientID: String = apiClientID, scopes: [String] = [],
                       now: Date) throws -> String {
        try tokens.accessToken(subject: userID, clientID: clientID, scopes: scopes, sessionIDHash: sessionIDHash,
                               now: now, lifetime: lifetime, key: keys.signingKey)
    }

    /// The claims of a token we issued and that has not expired; nil for anything else.
    package func verify(_ token: String, now: Date) -> Claims? {
        guard let claims = tokens.verifyAccessToken(token, now: now, publicKey: keys.publicKey) else { return nil }
        return Claims(userID: claims.memberID, sessionIDHash: claims.sessionIDHash, clientID: claims.clientID,
                      scopes: claims.scopes, expiresAt: claims.expiresAt)
    }
}
