import AppleID

/// Why the JSON API (or Apple's notification endpoint) refused a request, beyond a sign-in failure.
enum APIError: Error, Equatable {
    case missingIDToken
    case invalidDeviceID
    case subjectMismatch
    case missingRefreshToken
    case refreshTokenReused
    case invalidRefreshToken
    /// No Bearer access token, or one that does not name a live session.
    case unauthorized
    case unsupportedMediaType
    case malformedJSON
    case notificationRejected(TokenRejection)
}
