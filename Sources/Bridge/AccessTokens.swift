import Foundation
import JOSE
import JSON

/// The service's own access tokens: compact HS256 JWS signed with a key derived from BRIDGE_SECRET_KEY,
/// with `typ` "asb-access+jwt" so they can never be taken for an Apple identity token (and an Apple token,
/// RS256 with no such `typ`, is never taken for one of ours). Each names its session, checked on every call.
struct AccessTokens: Sendable {
    static let type = "asb-access+jwt"
    static let maximumLength = 2048
    let key: HS256Key
    let issuer: String
    let lifetime: TimeInterval

    init(key: HS256Key, issuer: String, lifetime: TimeInterval) {
        self.key = key
        self.issuer = issuer
        self.lifetime = lifetime
    }

    struct Claims: Equatable {
        var userID: Int64
        var sessionIDHash: String
        var expiresAt: Date
    }

    func issue(userID: Int64, sessionIDHash: String, now: Date) -> String {
        let claims = JSONValue.object([
            "iss": .string(issuer), "sub": .string(String(userID)), "sid": .string(sessionIDHash),
            "iat": .number(now.timeIntervalSince1970.rounded(.down)),
            "exp": .number(now.addingTimeInterval(lifetime).timeIntervalSince1970.rounded(.down)),
        ])
        return key.sign(claims: claims, header: ["typ": .string(Self.type)])
    }

    /// The claims of a token we issued and that has not expired; nil for anything else.
    func verify(_ token: String, now: Date) -> Claims? {
        guard let claims = try? key.verify(token, type: Self.type, maxLength: Self.maximumLength),
              claims["iss"]?.stringValue == issuer,
              let subject = claims["sub"]?.stringValue, let userID = Int64(subject),
              let session = claims["sid"]?.stringValue,
              let expiry = claims["exp"]?.doubleValue, expiry.isFinite,
              now.timeIntervalSince1970 < expiry else { return nil }
        return Claims(userID: userID, sessionIDHash: session, expiresAt: Date(timeIntervalSince1970: expiry))
    }
}
