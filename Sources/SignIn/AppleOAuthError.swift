import AppleID

/// The OAuth error codes Apple sends, parsed once where they enter (the callback's `error` field, or a refusal of
/// the token endpoint) so nothing downstream compares strings.
package enum AppleOAuthError: String, Sendable, CaseIterable {
    case invalidRequest = "invalid_request"
    case invalidClient = "invalid_client"
    case invalidGrant = "invalid_grant"
    case unauthorizedClient = "unauthorized_client"
    case unsupportedResponseType = "unsupported_response_type"
    case unsupportedGrantType = "unsupported_grant_type"
    case invalidScope = "invalid_scope"
    case accessDenied = "access_denied"
    /// The person closed Apple's sign-in sheet; only ever sent to the callback.
    case userCancelledAuthorize = "user_cancelled_authorize"
}

extension AppleTokenError {
    /// The OAuth error Apple answered with, when it is one this server knows.
    package var appleOAuthError: AppleOAuthError? {
        guard case let .apple(code, _) = self else { return nil }
        return AppleOAuthError(rawValue: code)
    }
}
