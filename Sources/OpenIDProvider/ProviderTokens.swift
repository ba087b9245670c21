import Foundation
import JOSE
import JSON
import TextBytes

/// One of the provider's RS256 signing keys.
public struct SigningKey: Sendable {
    public let keyID: String
    public let privateKey: RSAPrivateKey

    public init(keyID: String, privateKey: RSAPrivateKey) {
        self.keyID = keyID
        self.privateKey = privateKey
    }
}

/// Who an issued token is about, as the ID token and userinfo tell it.
public struct TokenSubject: Sendable, Equatable {
    /// The member's stable identifier, never reused.
    public var memberID: Int64
    public var appleSubject: String
    public var email: String?
    public var emailVerified: Bool
    public var isPrivateEmail: Bool
    public var name: String?

    public init(memberID: Int64, appleSubject: String, email: String?, emailVerified: Bool, isPrivateEmail: Bool,
                name: String?) {
        self.memberID = memberID
        self.appleSubject = appleSubject
        self.email = email
        self.emailVerified = emailVerified
        self.isPrivateEmail = isPrivateEmail
        self.name = name
    }

    /// `sub` and `apple_sub`, and by scope the email and name claims (userinfo and the ID token alike).
    public func claims(scopes: [String]) -> [String: JSONValue] {
        var claims: [String: JSONValue] = ["sub": .string(String(memberID)), "apple_sub": .string(appleSubject)]
        if scopes.contains("email"), let email {
            claims["email"] = .string(email)
            claims["email_verified"] = .bool(emailVerified)
            claims["is_private_email"] = .bool(isPrivateEmail)
        }
        if Scopes.grantsName(scopes), let name { claims["name"] = .string(name) }
        return claims
    }
}

/// Mints the provider's ID tokens and its RFC 9068 access tokens.
public struct ProviderTokens: Sendable {
    public static let accessTokenType = "at+jwt"
    public let issuer: String

    public init(issuer: String) { self.issuer = issuer }

    /// An RFC 9068 access token. `sid` names the session the bearer check requires to be live.
    public func accessToken(subject memberID: Int64, clientID: String, scopes: [String], sessionIDHash: String,
                            now: Date, lifetime: TimeInterval, key: SigningKey) throws(JOSEError) -> String {
        let issuedAt = now.timeIntervalSince1970.rounded(.down)
        let claims: JSONValue = .object([
            "iss": .string(issuer), "sub": .string(String(memberID)), "aud": .string(issuer),
            "client_id": .string(clientID), "scope": .string(scopes.joined(separator: " ")),
            "iat": .number(issuedAt), "exp": .number(issuedAt + lifetime.rounded(.down)),
            "jti": .string(SecureRandom.base64URLToken(byteCount: 16)), "sid": .string(sessionIDHash),
        ])
        return try JWSSigner.signRS256(header: ["typ": .string(Self.accessTokenType)], claims: claims,
                                       key: key.privateKey, keyID: key.keyID)
    }

    /// An ID token for `clientID`; `nonce` is the client's from the authorization request.
    public func idToken(subject: TokenSubject, clientID: String, scopes: [String], nonce: String?, authTime: Date,
                        accessToken: String, now: Date, lifetime: TimeInterval, key: SigningKey) throws(JOSEError) -> String {
        var claims = subject.claims(scopes: scopes)
        let issuedAt = now.timeIntervalSince1970.rounded(.down)
        claims["iss"] = .string(issuer)
        claims["aud"] = .string(clientID)
        claims["azp"] = .string(clientID)
        claims["iat"] = .number(issuedAt)
        claims["exp"] = .number(issuedAt + lifetime.rounded(.down))
        claims["auth_time"] = .number(authTime.timeIntervalSince1970.rounded(.down))
        claims["at_hash"] = .string(Self.atHash(accessToken))
        if let nonce { claims["nonce"] = .string(nonce) }
        return try JWSSigner.signRS256(header: ["typ": "JWT"], claims: .object(claims), key: key.privateKey, keyID: key.keyID)
    }

    /// Base64url of the left half of the SHA-256 of the access token (OpenID Connect Core §3.1.3.6, RS256).
    public static func atHash(_ accessToken: String) -> String {
        Base64URL.encode(SHA256.hash(Array(accessToken.utf8)).prefix(16))
    }
}

/// What a verified access token of ours says.
public struct AccessTokenClaims: Sendable, Equatable {
    public var memberID: Int64
    public var sessionIDHash: String
    public var clientID: String
    public var scopes: [String]
    public var expiresAt: Date
}

extension ProviderTokens {
    public static let maximumAccessTokenLength = 4096

    /// The claims of an access token this issuer signed (with a key `publicKey(kid)` still knows) that has not
    /// expired; nil for anything else, including any token whose `typ` is not at+jwt.
    public func verifyAccessToken(_ token: String, now: Date, publicKey: (String) -> RSAPublicKey?) -> AccessTokenClaims? {
        guard let jws = try? CompactJWS(parsing: token, maxLength: Self.maximumAccessTokenLength),
              (try? jws.requireAlgorithm(in: [.RS256])) != nil,
              let type = jws.headerValue("typ")?.stringValue?.lowercased(),
              type == Self.accessTokenType || type == "application/" + Self.accessTokenType,
              let keyID = jws.keyID, let key = publicKey(keyID),
              key.verifyRS256(signature: jws.signature, message: jws.signingInput),
              let claims = try? jws.claims(),
              claims["iss"]?.stringValue == issuer,
              let subject = claims["sub"]?.stringValue, let memberID = Int64(subject),
              let session = claims["sid"]?.stringValue,
              let expiry = claims["exp"]?.doubleValue, expiry.isFinite, now.timeIntervalSince1970 < expiry
        else { return nil }
        let scopes = (claims["scope"]?.stringValue ?? "").split(separator: " ").map(String.init)
        return AccessTokenClaims(memberID: memberID, sessionIDHash: session, clientID: claims["client_id"]?.stringValue ?? "",
                                 scopes: scopes, expiresAt: Date(timeIntervalSince1970: expiry))
    }
}

/// Who an `id_token_hint` names: an ID token this issuer signed (with a key still published), expired or not
/// (OpenID Connect Core 3.1.2.1: the hint may have expired; RP-Initiated Logout 1.0 §2 likewise).
public struct IDTokenHint: Sendable, Equatable {
    public var memberID: Int64
    /// `aud`: the client it was issued to.
    public var audience: String
}

extension ProviderTokens {
    /// The subject and client of an ID token of this issuer; nil for anything else (an access token, another
    /// issuer's token, a key no longer published, a signature that does not verify).
    public func idTokenHint(_ token: String, publicKey: (String) -> RSAPublicKey?) -> IDTokenHint? {
        guard let jws = try? CompactJWS(parsing: token, maxLength: 8192),
              (try? jws.requireAlgorithm(in: [.RS256])) != nil,
              jws.headerValue("typ")?.stringValue?.lowercased() != Self.accessTokenType,
              let keyID = jws.keyID, let key = publicKey(keyID),
              key.verifyRS256(signature: jws.signature, message: jws.signingInput),
              let claims = try? jws.claims(),
              let issuer = claims["iss"]?.stringValue, issuer.hasSameUTF8(as: self.issuer),
              let subject = claims["sub"]?.stringValue, let memberID = Int64(subject),
              let audience = claims["aud"]?.stringValue
        else { return nil }
        return IDTokenHint(memberID: memberID, audience: audience)
    }
}
