import Foundation

/// One of the OpenID provider's RS256 signing keys. The private key is stored sealed (the caller encrypts it);
/// the public JWK is plain so every instance can publish it.
public struct ProviderSigningKeyRecord: Sendable, Equatable {
    public var keyID: String
    public var publicJWK: String
    public var sealedPrivateKey: [UInt8]
    public var createdAt: Date
    /// Set when a newer key took over signing; the key stays published for a while after.
    public var retiredAt: Date?

    public init(keyID: String, publicJWK: String, sealedPrivateKey: [UInt8], createdAt: Date, retiredAt: Date? = nil) {
        self.keyID = keyID
        self.publicJWK = publicJWK
        self.sealedPrivateKey = sealedPrivateKey
        self.createdAt = createdAt
        self.retiredAt = retiredAt
    }
}

/// What a relying party asked for when it sent the browser to the authorization endpoint, kept with the login
/// attempt (by the digest of its state) so whichever instance receives Apple's answer can finish it.
public struct ProviderAuthorization: Sendable, Equatable {
    public var stateHash: String
    public var clientID: String
    public var redirectURI: String
    public var clientState: String?
    public var nonce: String?
    public var codeChallenge: String?
    public var scope: String
    public var createdAt: Date
    /// How the answer reaches the redirect URI: `query` or `form_post`.
    public var responseMode: String

    public init(stateHash: String, clientID: String, redirectURI: String, clientState: String?, nonce: String?,
                codeChallenge: String?, scope: String, createdAt: Date, responseMode: String = "query") {
        self.responseMode = responseMode
        self.stateHash = stateHash
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.clientState = clientState
        self.nonce = nonce
        self.codeChallenge = codeChallenge
        self.scope = scope
        self.createdAt = createdAt
    }
}

/// An authorization code (only its hash is stored): single use, short-lived, bound to the client, the redirect URI
/// and the PKCE challenge. `familyID` names the refresh-token family its redemption issued, so that a second
/// redemption can revoke it.
public struct AuthorizationCodeRecord: Sendable, Equatable {
    public var codeHash: String
    public var clientID: String
    public var redirectURI: String
    public var codeChallenge: String?
    public var scope: String
    public var nonce: String?
    public var userID: Int64
    public var authTime: Date
    public var createdAt: Date
    public var expiresAt: Date
    public var redeemedAt: Date?
    public var familyID: String?

    public init(codeHash: String, clientID: String, redirectURI: String, codeChallenge: String?, scope: String,
                nonce: String?, userID: Int64, authTime: Date, createdAt: Date, expiresAt: Date,
                redeemedAt: Date? = nil, familyID: String? = nil) {
        self.codeHash = codeHash
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.codeChallenge = codeChallenge
        self.scope = scope
        self.nonce = nonce
        self.userID = userID
        self.authTime = authTime
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.redeemedAt = redeemedAt
        self.familyID = familyID
    }
}

/// What `redeemAuthorizationCode` found.
public enum CodeRedemption: Sendable, Equatable {
    /// Unused and unexpired, now marked redeemed.
    case redeemed(AuthorizationCodeRecord)
    /// Redeemed before: a replay.
    case replayed(AuthorizationCodeRecord)
    case expired
    case unknown
}

/// The relying party a refresh-token family was issued to, with what it was granted.
public struct ProviderGrant: Sendable, Equatable {
    public var familyID: String
    public var clientID: String
    public var userID: Int64
    public var scope: String
    public var authTime: Date
    public var createdAt: Date

    public init(familyID: String, clientID: String, userID: Int64, scope: String, authTime: Date, createdAt: Date) {
        self.familyID = familyID
        self.clientID = clientID
        self.userID = userID
        self.scope = scope
        self.authTime = authTime
        self.createdAt = createdAt
    }
}
