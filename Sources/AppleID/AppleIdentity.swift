import Foundation

/// A verified Apple identity token, normalized. Everything here comes from the signed token, never from
/// the unsigned `user` JSON.
public struct AppleIdentity: Sendable, Equatable {
    public var subject: String
    public var audience: String
    public var issuer: String
    public var email: String?
    public var emailVerified: Bool
    public var isPrivateEmail: Bool
    /// Apple's `real_user_status`: 0 unsupported, 1 unknown, 2 likely real.
    public var realUserStatus: Int?
    /// The token's nonce matched the one this server issued (raw or SHA-256 hex).
    public var nonceVerified: Bool
    public var issuedAt: Date
    public var expiresAt: Date
    public var authTime: Date?
    /// SHA-256 of the whole token, lowercase hex, when it came from `IdentityTokenVerifier.verify`.
    public var tokenDigest: String?
    /// `transfer_sub`: for up to 60 days after the app moved to another developer team, the identifier the old
    /// team's export recorded for this person, beside the new team's `subject` (see docs/app-transfer.md).
    public var transferSubject: String?

    public init(subject: String, audience: String, issuer: String, email: String?, emailVerified: Bool,
                isPrivateEmail: Bool, realUserStatus: Int?, nonceVerified: Bool, issuedAt: Date, expiresAt: Date,
                authTime: Date?, transferSubject: String? = nil) {
        self.subject = subject
        self.audience = audience
        self.issuer = issuer
        self.email = email
        self.emailVerified = emailVerified
        self.isPrivateEmail = isPrivateEmail
        self.realUserStatus = realUserStatus
        self.nonceVerified = nonceVerified
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.authTime = authTime
        self.transferSubject = transferSubject
    }
}
