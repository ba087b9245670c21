import Foundation
import JOSE
import JSON

/// The service's own access tokens: compact JWS, HMAC-SHA256 with a key derived from BRIDGE_SECRET_KEY,
/// with `typ` "asb-access+jwt" so they can never be taken for an Apple identity token (and an Apple token,
/// RS256 with no such `typ`, is never taken for one of ours). Each names its session, checked on every call.
struct AccessTokens: Sendable {
    static let type = "asb-access+jwt"
    let key: [UInt8]
    let issuer: String
    let lifetime: TimeInterval

    init(secretKey: [UInt8], issuer: String, lifetime: TimeInterval) {
        key = (try? HKDFSHA256.derive(key: secretKey, salt: Array("AppleSignInBridge".utf8),
                                      info: Array("access-token-v1".utf8), length: 32)) ?? secretKey
        self.issuer = issuer
        self.lifetime = lifetime
    }

    struct Claims: Equatable {
        var userID: Int64
        var sessionIDHash: String
        var expiresAt: Date
    }

    func issue(userID: Int64, sessionIDHash: String, now: Date) -> String {
        let header = JSONValue.object(["alg": "HS256", "typ": .string(Self.type)])
        let claims = JSONValue.object([
            "iss": .string(issuer), "sub": .string(String(userID)), "sid": .string(sessionIDHash),
            "iat": .number(now.timeIntervalSince1970.rounded(.down)),
            "exp": .number(now.addingTimeInterval(lifetime).timeIntervalSince1970.rounded(.down)),
        ])
        let input = Base64URL.encode(Array(header.serialized().utf8)) + "." + Base64URL.encode(Array(claims.serialized().utf8))
        return input + "." + Base64URL.encode(HMACSHA256.authenticate(key: key, message: Array(input.utf8)))
    }

    /// The claims of a token we issued and that has not expired; nil for anything else.
    func verify(_ token: String, now: Date) -> Claims? {
        guard token.utf8.count <= 2048 else { return nil }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]), let payload = Base64URL.decode(parts[1]),
              let signature = Base64URL.decode(parts[2]),
              let header = try? JSONValue.parse(headerBytes),
              header["alg"]?.stringValue == "HS256", header["typ"]?.stringValue == Self.type else { return nil }
        let input = Array(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        guard ConstantTime.equals(HMACSHA256.authenticate(key: key, message: input), signature),
              let claims = try? JSONValue.parse(payload), claims["iss"]?.stringValue == issuer,
              let subject = claims["sub"]?.stringValue, let userID = Int64(subject),
              let session = claims["sid"]?.stringValue, let expiry = claims["exp"]?.doubleValue,
              now.timeIntervalSince1970 < expiry else { return nil }
        return Claims(userID: userID, sessionIDHash: session, expiresAt: Date(timeIntervalSince1970: expiry))
    }
}
