import Foundation

/// One of Apple's server-to-server events about a user, verified.
public struct AppleServerNotification: Sendable, Equatable {
    public enum EventType: String, Sendable, CaseIterable {
        case emailDisabled = "email-disabled"
        case emailEnabled = "email-enabled"
        case consentRevoked = "consent-revoked"
        case accountDelete = "account-delete"

        /// Apple's pages spell the deletion event both `account-delete` and `account-deleted`.
        public init?(appleName: String) {
            if appleName == "account-deleted" {
                self = .accountDelete
            } else {
                self.init(rawValue: appleName)
            }
        }
    }

    public var type: EventType
    public var subject: String
    public var email: String?
    public var isPrivateEmail: Bool?
    public var eventTime: Date?
    /// The JWT's `jti`, or the SHA-256 hex of the signed payload when Apple sent none: the key for idempotency.
    public var jti: String

    public init(type: EventType, subject: String, email: String?, isPrivateEmail: Bool?, eventTime: Date?, jti: String) {
        self.type = type
        self.subject = subject
        self.email = email
        self.isPrivateEmail = isPrivateEmail
        self.eventTime = eventTime
        self.jti = jti
    }
}
