import Foundation

/// A nonce the server issued to a native app (`POST /api/auth/nonce`), to be echoed in
/// the identity token it then presents. Single use: `consumedAt` is set by the one
/// sign-in that uses it.
public struct APINonce: Sendable, Equatable {
    public var nonce: String
    public var createdAt: Date
    public var expiresAt: Date
    public var consumedAt: Date?

    public init(nonce: String, createdAt: Date, expiresAt: Date, consumedAt: Date? = nil) {
        self.nonce = nonce
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.consumedAt = consumedAt
    }
}
