import AppleID
@testable import Bridge
import Testing

/// Every reason code a page can show has its heading and message in the one wording table.
@Suite("Error wording by reason code")
struct ErrorWordingTests {
    static let rejections: [TokenRejection] = [
        .malformed("x"), .algorithmNotAllowed("HS256"), .missingKeyID, .unknownKeyID("k"), .keysUnavailable, .badSignature,
        .wrongIssuer("i"), .wrongAudience("a"), .expired, .issuedInFuture, .issuedTooLongAgo, .missingSubject,
        .missingNonce, .nonceMismatch, .codeHashMismatch,
    ]
    static let failures: [SignInFailure] = rejections.map { .tokenRejected($0) } + [
        .codeExchange(.missingCode), .codeExchange(.appleUnavailable), .codeExchange(.serverMisconfigured),
        .codeExchange(.codeRefused), .tokenReplayed, .loginAttemptAlreadyUsed, .nonceExpired, .nonceAlreadyUsed,
        .nonceRequired,
    ]
    static let refusals: [PageRefusal] = [
        .missingState, .unknownState, .stateExpired, .stateFromOtherBrowser, .missingIDToken, .signOutNotFromThisSite,
        .deletionNotFromThisSite, .duplicateCookie, .appleReportedError(nil),
    ] + AppleOAuthError.allCases.map { .appleReportedError($0) }

    @Test("each sign-in failure and page refusal has its own wording, not a fallback")
    func everyCodeHasWording() {
        let descriptions = Self.failures.map { WebErrorPresenter.describe(failure: $0) }
            + Self.refusals.filter { refusal in
                // Only the errors the callback names are shown by name; the rest read as "other".
                guard case let .appleReportedError(error?) = refusal else { return true }
                return AppleRedirect.reportedAppleErrors.contains(error)
            }.map { WebErrorPresenter.describe(refusal: $0) }
        let missing = descriptions.map(\.reasonCode).filter { ErrorWording.wording(for: $0) == nil }
        #expect(missing.isEmpty)
    }

    @Test("placeholders are filled; an unknown code has no wording")
    func placeholders() {
        let wording = ErrorWording.wording(for: "too_many_sign_in_attempts", arguments: ["seconds": "42"])
        #expect(wording?.message == "Please wait 42 seconds and try again.")
        #expect(ErrorWording.wording(for: "no_such_code") == nil)
    }

    @Test("the web and the API give a sign-in failure the same status")
    func sameStatusBothWays() {
        let mismatched = Self.failures.filter {
            WebErrorPresenter.describe(failure: $0).status != JSONErrorPresenter.body(forSignInFailure: $0).status
        }
        #expect(mismatched.isEmpty)
    }
}
