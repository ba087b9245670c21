import AppleID
@testable import Bridge
import Foundation
import HTTPServer
import SignIn
import Testing
import WebPresentation

/// Every reason code a page can show has its heading and message in the catalogs (`Locales/`), in every language.
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

    static func pages() throws -> Pages { try Pages(directory: packageRoot + "/Templates", devMode: false) }

    @Test("each sign-in failure, page refusal and HTTP refusal has its own wording in every catalog, not a fallback")
    func everyCodeHasWording() throws {
        let catalogs = try Self.pages().catalogs
        var descriptions = Self.failures.map { WebErrorPresenter.describe(failure: $0) }
            + Self.refusals.map { WebErrorPresenter.describe(refusal: $0) }
        descriptions.append(try #require(WebErrorPresenter.describe(RateLimited(retryAfter: 3))))
        for (status, path, method) in [(404, "/nope", "GET"), (404, "/public/x.css", "GET"), (405, "/login", "POST"),
                                       (405, "/logout", "GET"), (405, "/apple_redirect", "GET"),
                                       (405, "/account/delete", "GET"), (415, "/apple_redirect", "POST")] {
            descriptions.append(WebErrorPresenter.describe(httpError: HTTPError(status, "x"),
                                                           request: Request(method: method, path: path)))
        }
        var missing: [String] = []
        for language in catalogs.languages {
            let messages = catalogs.catalog(language).messages
            missing += descriptions.map(\.catalogCode)
                .filter { messages["error.\($0).heading"] == nil || messages["error.\($0).message"] == nil }
                .map { "\(language): \($0)" }
        }
        #expect(missing.isEmpty)
    }

    @Test("the web and the API give a sign-in failure the same status")
    func sameStatusBothWays() {
        let mismatched = Self.failures.filter {
            WebErrorPresenter.describe(failure: $0).status != JSONErrorPresenter.body(forSignInFailure: $0).status
        }
        #expect(mismatched.isEmpty)
    }
}
