import Foundation
import JOSE
import JSON

/// A developer's `.p8` key as Apple knows it: the public half, under its key ID and team.
struct RegisteredClientKey: Sendable {
    let teamID: String
    let keyID: String
    let publicKey: ECPublicKey
}

/// Checks the `client_secret` JWT that clients send to `/auth/token` and `/auth/revoke`.
/// With no key registered any non-empty secret passes, so flows work before keys are set up.
struct ClientSecretVerifier: Sendable {
    /// Apple refuses client secrets valid for longer than six months.
    static let maximumLifetime: Int64 = 15_777_000
    static let audience = "https://appleid.apple.com"
    static let clockLeeway: Int64 = 60

    private var keys: [String: RegisteredClientKey] = [:]

    mutating func register(_ key: RegisteredClientKey) { keys[key.keyID] = key }

    func isValid(secret: String, clientID: String, now: Date) -> Bool {
        guard !secret.isEmpty else { return false }
        guard !keys.isEmpty else { return true }
        guard let jws = try? CompactJWS(parsing: secret),
              (try? jws.requireAlgorithm(in: [.ES256])) != nil,
              let keyID = jws.keyID, let key = keys[keyID],
              key.publicKey.verifyES256(signature: jws.signature, message: jws.signingInput),
              let claims = try? jws.claims()
        else { return false }
        return claimsAreValid(claims, key: key, clientID: clientID, now: Int64(now.timeIntervalSince1970))
    }

    private func claimsAreValid(_ claims: [String: JSONValue], key: RegisteredClientKey, clientID: String,
                                now: Int64) -> Bool {
        guard claims["iss"]?.stringValue == key.teamID,
              claims["sub"]?.stringValue == clientID,
              Self.audienceMatches(claims["aud"]),
              let issuedAt = claims["iat"]?.int64Value,
              let expiresAt = claims["exp"]?.int64Value
        else { return false }
        // Compared without subtracting: iat and exp come from the sender and may sit at the ends of Int64.
        // iat is bounded above by now first, so iat + maximumLifetime cannot overflow.
        return issuedAt <= now + Self.clockLeeway
            && expiresAt > now
            && expiresAt > issuedAt
            && expiresAt <= issuedAt + Self.maximumLifetime
    }

    private static func audienceMatches(_ value: JSONValue?) -> Bool {
        switch value {
        case .string(let audience): audience == Self.audience
        case .array(let audiences): audiences.contains(.string(Self.audience))
        default: false
        }
    }
}
