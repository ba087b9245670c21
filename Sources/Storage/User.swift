import Foundation

/// A person known to the service, identified by `(provider, providerUserID)` — never by email.
public struct User: Sendable, Equatable {
    /// The provider name stored for Sign in with Apple users.
    public static let appleProvider = "apple"

    public var id: Int64
    public var provider: String
    public var providerUserID: String
    public var email: String?
    public var isPrivateEmail: Bool
    public var emailVerified: Bool
    public var displayName: String?
    public var createdAt: Date
    public var updatedAt: Date
    /// Whether Apple forwards mail sent to the private relay address; it tells us with
    /// `email-disabled` / `email-enabled` notifications.
    public var emailForwardingEnabled: Bool

    public init(
        id: Int64, provider: String, providerUserID: String, email: String?,
        isPrivateEmail: Bool, emailVerified: Bool, displayName: String?,
        createdAt: Date, updatedAt: Date, emailForwardingEnabled: Bool = true
    ) {
        self.id = id
        self.provider = provider
        self.providerUserID = providerUserID
        self.email = email
        self.isPrivateEmail = isPrivateEmail
        self.emailVerified = emailVerified
        self.displayName = displayName
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.emailForwardingEnabled = emailForwardingEnabled
    }
}

/// What a verified Apple identity token (plus the unsigned first-sign-in `user` JSON,
/// for the name only) tells us about a person.
public struct AppleUserProfile: Sendable, Equatable {
    public var sub: String
    public var email: String?
    public var emailVerified: Bool
    public var isPrivateEmail: Bool
    public var displayName: String?
    /// The token's `transfer_sub` claim, during an app's transfer to another team: an unknown `sub` with a
    /// recorded transfer identifier signs in that member, who then keeps the new `sub`.
    public var transferSub: String?
    /// The team this server signs in for (APPLE_TEAM_ID): a recorded transfer is honoured only when it was exported
    /// for this team, and never without one.
    public var transferTeam: String?

    public init(sub: String, email: String?, emailVerified: Bool, isPrivateEmail: Bool, displayName: String?,
                transferSub: String? = nil, transferTeam: String? = nil) {
        self.sub = sub
        self.email = email
        self.emailVerified = emailVerified
        self.isPrivateEmail = isPrivateEmail
        self.displayName = displayName
        self.transferSub = transferSub
        self.transferTeam = transferTeam
    }
}
