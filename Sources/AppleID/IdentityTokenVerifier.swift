import Foundation
import JOSE
import JSON

/// Which client IDs and issuers a token may name, and the time leeway.
public struct VerificationPolicy: Sendable {
    public var issuers: [String]
    /// The Services ID of the web / JS flow. Tokens for it must always carry the nonce.
    public var servicesID: String?
    public var bundleIDs: [String]
    /// Allowed clock skew for `exp` and `iat`.
    public var leeway: TimeInterval = 60
    /// How old `iat` may be. Apple's identity tokens live for at most a day.
    public var maximumAge: TimeInterval = 86_400
    public var maximumTokenLength = 16_384

    public init(issuers: [String], servicesID: String?, bundleIDs: [String]) {
        self.issuers = issuers
        self.servicesID = servicesID
        self.bundleIDs = bundleIDs
    }
}

/// What the caller knows about the sign-in the token should belong to.
public struct VerificationContext: Sendable {
    /// The nonce this server issued for this sign-in; the token must carry it raw or as its SHA-256 hex.
    /// A bundle-ID token may carry none (apps that do not set `request.nonce`); a Services-ID token must.
    public var expectedNonce: String?
    /// The authorization code that came with the token; checked against `c_hash` when both are present.
    public var authorizationCode: String?
    /// Refuse a token without a nonce even when its audience is a bundle ID.
    public var requireNonce: Bool
    /// False for the id_token of Apple's token endpoint, which carries no nonce; every other rule still applies.
    public var checkNonce: Bool = true

    public init(expectedNonce: String? = nil, authorizationCode: String? = nil, requireNonce: Bool = false,
                checkNonce: Bool = true) {
        self.expectedNonce = expectedNonce
        self.authorizationCode = authorizationCode
        self.requireNonce = requireNonce
        self.checkNonce = checkNonce
    }
}

/// Verifies Apple identity tokens: every rule, in an order that refuses cheaply before any crypto.
public final class IdentityTokenVerifier: Sendable {
    public let policy: VerificationPolicy
    private let keys: JWKSCache
    private let clock: WallClock

    public init(policy: VerificationPolicy, keys: JWKSCache, clock: WallClock = .system) {
        self.policy = policy
        self.keys = keys
        self.clock = clock
    }

    public func verify(_ token: String, context: VerificationContext = VerificationContext()) throws(TokenRejection) -> AppleIdentity {
        let claims = try AppleSignedClaims.verify(token, keys: keys, maxLength: policy.maximumTokenLength)
        return try check(claims, context: context)
    }

    /// The claim rules, for a token whose signature already verified.
    func check(_ claims: JSONValue, context: VerificationContext) throws(TokenRejection) -> AppleIdentity {
        let issuer = claims["iss"]?.stringValue ?? ""
        guard policy.issuers.contains(issuer) else { throw .wrongIssuer(issuer) }

        let audience = try singleAudience(claims["aud"])
        let isServicesID = audience == policy.servicesID
        guard isServicesID || policy.bundleIDs.contains(audience) else { throw .wrongAudience(audience) }

        let now = clock.now
        guard let expiry = claims["exp"]?.doubleValue else { throw .malformed("no exp claim") }
        guard now.timeIntervalSince1970 < expiry + policy.leeway else { throw .expired }
        guard let issuedAt = claims["iat"]?.doubleValue else { throw .malformed("no iat claim") }
        guard issuedAt <= now.timeIntervalSince1970 + policy.leeway else { throw .issuedInFuture }
        guard issuedAt >= now.timeIntervalSince1970 - policy.maximumAge - policy.leeway else { throw .issuedTooLongAgo }

        guard let subject = claims["sub"]?.stringValue, !subject.isEmpty else { throw .missingSubject }

        let nonceVerified = try context.checkNonce
            ? checkNonce(claims["nonce"]?.stringValue, expected: context.expectedNonce,
                         required: isServicesID || context.requireNonce)
            : false

        if let code = context.authorizationCode, !code.isEmpty, let codeHash = claims["c_hash"]?.stringValue {
            let digest = SHA256.hash(Array(code.utf8))
            guard ConstantTime.equals(Base64URL.encode(digest.prefix(16)), codeHash) else { throw .codeHashMismatch }
        }

        let email = claims["email"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        return AppleIdentity(
            subject: subject, audience: audience, issuer: issuer, email: email,
            emailVerified: Self.flexibleBool(claims["email_verified"]),
            isPrivateEmail: Self.flexibleBool(claims["is_private_email"]),
            realUserStatus: claims["real_user_status"]?.doubleValue.flatMap { Int(exactly: $0) },
            nonceVerified: nonceVerified,
            issuedAt: Date(timeIntervalSince1970: issuedAt), expiresAt: Date(timeIntervalSince1970: expiry),
            authTime: claims["auth_time"]?.doubleValue.map { Date(timeIntervalSince1970: $0) })
    }

    private func singleAudience(_ value: JSONValue?) throws(TokenRejection) -> String {
        switch value {
        case let .string(audience)?:
            return audience
        case let .array(entries)? where entries.count == 1:
            if let audience = entries[0].stringValue { return audience }
            throw .wrongAudience("")
        case let .array(entries)?:
            // Apple issues one audience. Several are refused outright: OIDC Core 3.1.3.7 rejects tokens naming
            // audiences this client does not trust, and one token must not serve two clients.
            throw .wrongAudience(entries.compactMap(\.stringValue).joined(separator: ","))
        default:
            throw .wrongAudience("")
        }
    }

    /// Returns whether the nonce was verified. The raw nonce or its SHA-256 hex are both accepted, since
    /// native apps pass `sha256(nonce)` to `ASAuthorizationAppleIDRequest.nonce` as Apple recommends.
    private func checkNonce(_ tokenNonce: String?, expected: String?, required: Bool) throws(TokenRejection) -> Bool {
        guard let tokenNonce, !tokenNonce.isEmpty else {
            if required { throw .missingNonce }
            return false
        }
        guard let expected else { return false }
        let matchesRaw = ConstantTime.equals(tokenNonce, expected)
        let matchesHash = ConstantTime.equals(tokenNonce, SHA256.hexDigest(Array(expected.utf8)))
        guard matchesRaw || matchesHash else { throw .nonceMismatch }
        return true
    }

    /// Apple has sent these flags both as JSON booleans and as the strings "true"/"false".
    static func flexibleBool(_ value: JSONValue?) -> Bool {
        switch value {
        case let .bool(flag)?: flag
        case let .string(text)?: text.lowercased() == "true"
        default: false
        }
    }
}
