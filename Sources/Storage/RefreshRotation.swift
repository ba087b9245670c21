/// What `rotateRefreshToken` found.
public enum RefreshRotation: Equatable, Sendable {
    /// The presented token, now marked rotated: issue its successor.
    case rotated(RefreshToken)
    /// The presented token was rotated before, or its family was revoked for reuse (kept
    /// as a tombstone until the token expires): a replay, revoke its family.
    case reused(RefreshToken)
    /// The token's family was revoked for another reason than reuse (RFC 7009 revocation, a replayed
    /// authorization code) and is kept as a tombstone: refuse it, it is no replay.
    case revoked(RefreshToken)
    /// The token, or the session it belongs to, has expired.
    case expired
    case unknown
}
