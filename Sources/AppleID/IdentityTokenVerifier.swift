import Foundation
import JOSE
import TextBytes

/// Verifies Apple identity tokens: every rule, in an order that refuses cheaply before any crypto.
public final class IdentityTokenVerifier: Sendable {
    public let policy: VerificationPolicy
    private let keys: any AppleKeySet
    /// The same keys when they may be fetched: asked whether a key would be.
    private let fetching: (any AppleKeyFetching)?
    private let clock: WallClock

    public init(policy: VerificationPolicy, keys: any AppleKeySet, clock: WallClock = .system) {
        self.policy = policy
        self.keys = keys
        self.fetching = keys as? any AppleKeyFetching
        self.clock = clock
    }

    /// Verifies `token`, fetching Apple's keys when its key is not held (or is due a refresh).
    public func verify(_ token: String, context: VerificationContext = VerificationContext()) throws(TokenRejection) -> AppleIdentity {
        try verified(token, context: context, onlyWithoutFetching: nil)!
    }

    /// For a thread that must not wait on Apple: nil, before any signature work, when the token's key is not held or
    /// is due a refresh (verify it where fetching is allowed); otherwise what `verify` answers. The token's header is
    /// decoded once: asking `verifiesWithoutFetching` first decoded it twice.
    public func verifyIfKeyHeld(_ token: String,
                                context: VerificationContext = VerificationContext()) throws(TokenRejection) -> AppleIdentity? {
        try verified(token, context: context, onlyWithoutFetching: fetching)
    }

    private func verified(_ token: String, context: VerificationContext,
                          onlyWithoutFetching fetching: (any AppleKeyFetching)?) throws(TokenRejection) -> AppleIdentity? {
        guard let (claims, tokenDigest) = try AppleSignedClaims.verifyWithDigest(
            token, keys: keys, maxLength: policy.maximumTokenLength, onlyWithoutFetching: fetching) else { return nil }
        var identity = try check(claims, context: context)
        identity.tokenDigest = tokenDigest
        return identity
    }

    /// Whether verifying `token` would need no call to Apple: its key is held (or the token will be refused
    /// before any key is needed).
    public func verifiesWithoutFetching(_ token: String) -> Bool {
        AppleSignedClaims.answersWithoutFetching(token, keys: fetching, maxLength: policy.maximumTokenLength)
    }

    /// The claim rules, for a token whose signature already verified.
    func check(_ claims: AppleClaims, context: VerificationContext) throws(TokenRejection) -> AppleIdentity {
        try policy.checkIssuer(claims)
        let audience = try policy.audience(of: claims)
        let isServicesID = policy.servicesID?.hasSameUTF8(as: audience) == true
        let times = try policy.checkTimes(claims, now: clock.now, maximumAge: policy.maximumAge, requireExpiry: true)
        guard let expiresAt = times.expiresAt else { throw .malformed("no exp claim") }
        guard let subject = claims.subject else { throw .missingSubject }

        let nonceVerified = try context.checkNonce
            ? Self.checkNonce(claims.nonce, expected: context.expectedNonce, required: isServicesID || context.requireNonce)
            : false
        if let code = context.authorizationCode, !code.isEmpty, let codeHash = claims.codeHash {
            let digest = SHA256.hash(Array(code.utf8))
            guard ConstantTime.equals(Base64URL.encode(digest.prefix(16)), codeHash) else { throw .codeHashMismatch }
        }
        return AppleIdentity(
            subject: subject, audience: audience, issuer: claims.issuer, email: claims.email,
            emailVerified: claims.emailVerified ?? false, isPrivateEmail: claims.isPrivateEmail ?? false,
            realUserStatus: claims.realUserStatus, nonceVerified: nonceVerified,
            issuedAt: times.issuedAt, expiresAt: expiresAt, authTime: claims.authTime,
            transferSubject: claims.transferSubject)
    }

    /// Returns whether the nonce was verified. The raw nonce or its SHA-256 hex are both accepted, since
    /// native apps pass `sha256(nonce)` to `ASAuthorizationAppleIDRequest.nonce` as Apple recommends.
    private static func checkNonce(_ tokenNonce: String?, expected: String?, required: Bool) throws(TokenRejection) -> Bool {
        guard let tokenNonce else {
            if required { throw .missingNonce }
            return false
        }
        guard let expected else { return false }
        // The hash is computed only when the raw nonce differs: which form matched tells nothing secret (the token's
        // holder can read its nonce), and a web sign-in, which sends the raw nonce, then skips a SHA-256.
        guard ConstantTime.equals(tokenNonce, expected)
                || ConstantTime.equals(tokenNonce, SHA256.hexDigest(Array(expected.utf8))) else { throw .nonceMismatch }
        return true
    }
}
