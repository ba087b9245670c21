import Foundation

/// The Apple refresh token of a user, kept to revoke it when the account is deleted.
/// Encrypted by the caller; the store never sees it in clear.
public struct AppleTokenRecord: Sendable, Equatable {
    public var userID: Int64
    /// The Services ID or bundle ID the token was issued to: the client secret for
    /// revoking it must name the same one.
    public var clientID: String
    public var encryptedRefreshToken: [UInt8]
    public var updatedAt: Date

    public init(userID: Int64, clientID: String, encryptedRefreshToken: [UInt8], updatedAt: Date) {
        self.userID = userID
        self.clientID = clientID
        self.encryptedRefreshToken = encryptedRefreshToken
        self.updatedAt = updatedAt
    }
}
