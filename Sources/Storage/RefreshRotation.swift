/// What `rotateRefreshToken` found.
public enum RefreshRotation: Equatable, Sendable {
    /// The presented token, now marked rotated: issue its successor.
    case rotated(RefreshToken)
    /// The presented token was rotated before, or its family was revoked for reuse (kept
    /// as a tombstone until the token expires): a replay, revoke its family.
    case reused(RefreshToken)
    /// The token, or the session it belongs to, has expired.
    case expired
    case unknown
}
