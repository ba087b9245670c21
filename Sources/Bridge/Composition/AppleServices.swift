import AppleID

/// Everything that talks to Apple or checks what Apple signed, built from one configuration.
public struct AppleServices: Sendable {
    /// Apple's published signing keys, cached.
    public let keys: JWKSCache
    /// Checks identity tokens.
    public let verifier: IdentityTokenVerifier
    /// Checks server-to-server notifications.
    public let notifications: NotificationVerifier
    /// Nil unless APPLE_TEAM_ID, APPLE_KEY_ID and APPLE_PRIVATE_KEY_PATH are set.
    public let clientSecrets: ClientSecretProvider?
    /// Exchanges codes and revokes grants; nil without client secrets.
    public let tokenClient: AppleTokenClient?
}
