import AppleID

/// Why the JSON API (or Apple's notification endpoint) refused a request, beyond a sign-in failure.
enum APIError: Error, Equatable {
    case missingIDToken
    case invalidDeviceID
    case subjectMismatch
    case missingRefreshToken
    case refreshTokenReused
    case invalidRefreshToken
    /// No Bearer access token.
    case missingAccessToken
    /// A Bearer access token that is malformed, forged, expired, or names no live session.
    case invalidAccessToken
    case unsupportedMediaType
    case malformedJSON
    case notificationRejected(TokenRejection)
}
