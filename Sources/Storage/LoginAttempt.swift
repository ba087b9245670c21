import Foundation

/// One started sign-in: the `state` and `nonce` sent to Apple, bound to the browser
/// that started it. Single use: `consumedAt` is set by the one callback that uses it.
public struct LoginAttempt: Sendable, Equatable {
    public var state: String
    public var nonce: String
    public var bindingHash: String
    public var createdAt: Date
    public var expiresAt: Date
    public var consumedAt: Date?

    public init(state: String, nonce: String, bindingHash: String, createdAt: Date, expiresAt: Date, consumedAt: Date? = nil) {
        self.state = state
        self.nonce = nonce
        self.bindingHash = bindingHash
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.consumedAt = consumedAt
    }
}
