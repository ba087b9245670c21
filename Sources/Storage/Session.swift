import Foundation

/// A signed-in session. Only the hash of the session id is stored.
public struct Session: Sendable, Equatable {
    public var idHash: String
    public var userID: Int64
    /// How the user signed in: `web`, `webview-native` or `api`.
    public var flow: String
    public var nonceVerified: Bool
    public var createdAt: Date
    public var expiresAt: Date

    public init(idHash: String, userID: Int64, flow: String, nonceVerified: Bool, createdAt: Date, expiresAt: Date) {
        self.idHash = idHash
        self.userID = userID
        self.flow = flow
        self.nonceVerified = nonceVerified
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}
