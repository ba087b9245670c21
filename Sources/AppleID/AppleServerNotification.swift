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

/// Why a notification was refused. Values from the sender are shortened and made printable for logs.
public enum NotificationRejection: Error, CustomStringConvertible, Equatable, Sendable {
    case malformed(String)
    case algorithmNotAllowed(String)
    case missingKeyID
    case unknownKeyID(String)
    case keysUnavailable
    case badSignature
    case wrongIssuer(String)
    case wrongAudience(String)
    case expired
    case issuedInFuture
    case unknownEventType(String)
    case missingSubject

    public var description: String {
        switch self {
        case let .malformed(reason): "the notification is malformed: \(reason)"
        case let .algorithmNotAllowed(alg): "the notification's algorithm \"\(alg)\" is not allowed (only RS256)"
        case .missingKeyID: "the notification names no signing key (kid)"
        case let .unknownKeyID(kid): "the notification's signing key \"\(kid)\" is not one of Apple's published keys"
        case .keysUnavailable: "Apple's signing keys could not be fetched to check the notification"
        case .badSignature: "the notification's signature does not verify"
        case let .wrongIssuer(issuer): "the notification was issued by \"\(issuer)\", not Apple"
        case let .wrongAudience(audience): "the notification is for \"\(audience)\", not one of this service's client IDs"
        case .expired: "the notification has expired"
        case .issuedInFuture: "the notification claims to be issued in the future"
        case let .unknownEventType(type): "the notification's event type \"\(type)\" is not one this server knows"
        case .missingSubject: "the notification's event names no user (sub)"
        }
    }

    /// 503 when Apple's keys cannot be had, so Apple delivers again later; otherwise 400.
    public var httpStatus: Int { self == .keysUnavailable ? 503 : 400 }
}
