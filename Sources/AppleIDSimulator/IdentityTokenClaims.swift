import Foundation
import JOSE
import JSON

/// The claims of an identity token, with defaults shaped like the tokens Apple issues.
/// Tests change any field, add or replace claims with `extra`, or drop claims with `removed`.
public struct IdentityTokenClaims: Sendable {
    public var issuer = "https://appleid.apple.com"
    public var audience: String
    public var subject: String
    public var issuedAt = Date()
    public var expiresIn: TimeInterval = 600
    public var nonce: String?
    /// The authorization code issued with this token; it becomes `c_hash`.
    public var code: String?
    /// The access token issued with this token; it becomes `at_hash`.
    public var accessToken: String?
    public var email: String?
    public var emailVerified = true
    /// Apple omits `is_private_email` for a shared real address, so `false` leaves the claim out.
    public var isPrivateEmail = false
    /// nil leaves `real_user_status` out, as in tokens from Apple's token endpoint.
    public var realUserStatus: Int? = 2
    public var nonceSupported = true
    /// Defaults to `issuedAt`.
    public var authTime: Date?
    /// `transfer_sub`: present after the app moved to another team, during the migration period.
    public var transferSubject: String?
    /// Claims added, or replacing the ones above.
    public var extra: [String: JSONValue] = [:]
    /// Claim names left out of the token (applied last).
    public var removed: Set<String> = []

    public init(audience: String, subject: String, nonce: String? = nil, code: String? = nil,
                email: String? = nil, isPrivateEmail: Bool = false, issuedAt: Date = Date()) {
        self.audience = audience
        self.subject = subject
        self.nonce = nonce
        self.code = code
        self.email = email
        self.isPrivateEmail = isPrivateEmail
        self.issuedAt = issuedAt
    }

    /// The JWT claims set.
    public var payload: [String: JSONValue] {
        let issued = Int64(issuedAt.timeIntervalSince1970.rounded(.down))
        var claims: [String: JSONValue] = [
            "iss": .string(issuer),
            "aud": .string(audience),
            "sub": .string(subject),
            "iat": .integer(issued),
            "exp": .integer(issued + Int64(expiresIn.rounded())),
            "auth_time": .integer(Int64((authTime ?? issuedAt).timeIntervalSince1970.rounded(.down))),
            "nonce_supported": .bool(nonceSupported),
        ]
        if let nonce { claims["nonce"] = .string(nonce) }
        if let code { claims["c_hash"] = .string(Self.halfHash(code)) }
        if let accessToken { claims["at_hash"] = .string(Self.halfHash(accessToken)) }
        if let email {
            claims["email"] = .string(email)
            claims["email_verified"] = .bool(emailVerified)
            if isPrivateEmail { claims["is_private_email"] = .bool(true) }
        }
        if let realUserStatus { claims["real_user_status"] = .integer(realUserStatus) }
        if let transferSubject { claims["transfer_sub"] = .string(transferSubject) }
        claims.merge(extra) { _, replacement in replacement }
        for name in removed { claims[name] = nil }
        return claims
    }

    /// OpenID Connect's `c_hash` / `at_hash` for RS256: base64url of the left half of SHA-256.
    public static func halfHash(_ value: String) -> String {
        Base64URL.encode(SHA256.hash(Array(value.utf8)).prefix(16))
    }
}
