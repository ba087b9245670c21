/// What `rotateRefreshToken` found.
public enum RefreshRotation: Equatable, Sendable {
    /// The presented token, now marked rotated: issue its successor.
    case rotated(RefreshToken)
    /// The presented token was rotated before: a replay, revoke its family.
    case reused(RefreshToken)
    /// The token, or the session it belongs to, has expired.
    case expired
    case unknown
}
