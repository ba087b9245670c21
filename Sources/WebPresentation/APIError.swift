import AppleID

/// Why the JSON API (or Apple's notification endpoint) refused a request, beyond a sign-in failure.
package enum APIError: Error, Equatable {
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
    /// A valid access token of a relying party that may not do this (RFC 6750 §3.1): deleting the account takes a
    /// token of the first-party app.
    case insufficientScope(String)
    case unsupportedMediaType
    case malformedJSON
    case notificationRejected(TokenRejection)
}
