import Foundation
import TextBytes

/// Which client IDs and issuers a JWT Apple signed may name, and the time rules: one policy for identity
/// tokens and server notifications alike.
public struct VerificationPolicy: Sendable {
    /// Compared exactly: `https://appleid.apple.com/` is not `https://appleid.apple.com`. An operator who
    /// sees Apple send another spelling lists both in APPLE_ISSUER.
    public var issuers: [String]
    /// The Services ID of the web / JS flow. Tokens for it must always carry the nonce.
    public var servicesID: String?
    public var bundleIDs: [String]
    /// Allowed clock skew for `exp` and `iat`.
    public var leeway: TimeInterval = 60
    /// How old an identity token's `iat` may be. Apple's identity tokens live for at most a day.
    public var maximumAge: TimeInterval = 86_400
    /// How old a notification's `iat` may be: Apple delivers promptly and retries for a limited time. Events
    /// may carry no `exp`, so this bounds their replay, well inside the 30 days their `jti` is remembered.
    public var maximumNotificationAge: TimeInterval = 7 * 86_400
    /// The longest `exp - iat` accepted. Apple's identity tokens live 10 minutes; a day leaves room for Apple
    /// to lengthen them, while a signed `exp` centuries away (which no store can hold) is refused.
    public var maximumLifetime: TimeInterval = 86_400
    public var maximumTokenLength = 16_384

    public init(issuers: [String], servicesID: String?, bundleIDs: [String]) {
        self.issuers = issuers
        self.servicesID = servicesID
        self.bundleIDs = bundleIDs
    }

    /// Every audience this service answers to.
    public var clientIDs: [String] { (servicesID.map { [$0] } ?? []) + bundleIDs }

    func checkIssuer(_ claims: AppleClaims) throws(TokenRejection) {
        // Byte for byte: `contains` on Strings is canonical equivalence.
        guard issuers.contains(where: { $0.hasSameUTF8(as: claims.issuer) }) else {
            throw .wrongIssuer(claims.issuer.loggable)
        }
    }

    /// The one audience, which must be one of `clientIDs`. Apple issues one audience. Several are refused
    /// outright even when one is ours: OIDC Core 3.1.3.7 rejects tokens naming audiences this client does not
    /// trust, and one token must not serve two clients.
    func audience(of claims: AppleClaims) throws(TokenRejection) -> String {
        guard claims.audiences.count == 1, let audience = claims.audiences.first,
              clientIDs.contains(where: { $0.hasSameUTF8(as: audience) }) else {
            throw .wrongAudience(claims.audiences.joined(separator: ",").loggable)
        }
        return audience
    }

    /// `exp` (when present; identity tokens must have one) within the leeway, `iat` present and neither in the
    /// future nor older than `maximumAge`, and `exp - iat` at most `maximumLifetime`.
    func checkTimes(_ claims: AppleClaims, now: Date, maximumAge: TimeInterval,
                    requireExpiry: Bool) throws(TokenRejection) -> (issuedAt: Date, expiresAt: Date?) {
        let now = now.timeIntervalSince1970
        if let expiry = claims.expiresAt {
            guard now < expiry.timeIntervalSince1970 + leeway else { throw .expired }
        } else if requireExpiry {
            throw .malformed("no exp claim")
        }
        guard let issuedAt = claims.issuedAt else { throw .malformed("no iat claim") }
        guard issuedAt.timeIntervalSince1970 <= now + leeway else { throw .issuedInFuture }
        guard issuedAt.timeIntervalSince1970 >= now - maximumAge - leeway else { throw .issuedTooLongAgo }
        if let expiry = claims.expiresAt, expiry.timeIntervalSince(issuedAt) > maximumLifetime {
            throw .lifetimeTooLong
        }
        return (issuedAt, claims.expiresAt)
    }
}
