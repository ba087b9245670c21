import Foundation

/// One of the service's own refresh tokens; only its hash is stored.
///
/// Every rotation issues a new token in the same family (one family per sign-in) and
/// for the same session, and marks the presented one rotated, so that presenting it
/// again can be recognized as a replay.
public struct RefreshToken: Sendable, Equatable {
    public var tokenHash: String
    public var familyID: String
    public var sessionIDHash: String
    public var userID: Int64
    public var createdAt: Date
    public var expiresAt: Date
    public var rotatedAt: Date?

    public init(
        tokenHash: String, familyID: String, sessionIDHash: String, userID: Int64,
        createdAt: Date, expiresAt: Date, rotatedAt: Date? = nil
    ) {
        self.tokenHash = tokenHash
        self.familyID = familyID
        self.sessionIDHash = sessionIDHash
        self.userID = userID
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.rotatedAt = rotatedAt
    }
}
