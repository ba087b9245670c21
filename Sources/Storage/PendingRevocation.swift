import Foundation

/// An Apple token revocation that failed and waits for another attempt. Not tied to a
/// user: it outlives the deleted account it came from.
public struct PendingRevocation: Sendable, Equatable {
    public var id: Int64
    public var clientID: String
    /// Encrypted by the caller, like `AppleTokenRecord.encryptedRefreshToken`.
    public var encryptedToken: [UInt8]
    /// `refresh_token` or `access_token`, as `/auth/revoke` expects it.
    public var tokenTypeHint: String
    public var attempts: Int
    public var nextAttemptAt: Date
    public var lastError: String?
    public var createdAt: Date

    public init(
        id: Int64, clientID: String, encryptedToken: [UInt8], tokenTypeHint: String, attempts: Int,
        nextAttemptAt: Date, lastError: String?, createdAt: Date
    ) {
        self.id = id
        self.clientID = clientID
        self.encryptedToken = encryptedToken
        self.tokenTypeHint = tokenTypeHint
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.lastError = lastError
        self.createdAt = createdAt
    }
}
