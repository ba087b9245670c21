/// What the caller knows about the sign-in an identity token should belong to.
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
