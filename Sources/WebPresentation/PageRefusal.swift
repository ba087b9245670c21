import SignIn

/// Why a page route refused a person, beyond a sign-in failure: the reasons only the browser flows have.
package enum PageRefusal: Error, Equatable {
    case missingState
    case unknownState
    case stateExpired
    /// The binding cookie names another browser than the one that started the sign-in.
    case stateFromOtherBrowser
    case missingIDToken
    /// Apple reported an error to the callback; nil for one this server does not name.
    case appleReportedError(AppleOAuthError?)
    /// A form post to a signed-in page without this session's CSRF token.
    case signOutNotFromThisSite
    case deletionNotFromThisSite
    /// The request carries two cookies of one of this server's names: one of them was planted.
    case duplicateCookie
    /// An invitation link whose token names no waiting invitation: used, expired, or cut short.
    case invitationUnusable
    /// `POST /apple/android/<package>` for a package not in APPLE_ANDROID_PACKAGES: nothing is handed to it.
    case unknownAndroidApp
}
