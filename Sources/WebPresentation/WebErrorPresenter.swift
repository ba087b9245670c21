import AppleID
import HTTPServer
import Mustache
import SignIn
import Storage

/// Turns what a page route threw into the error page a person sees: the status, and the heading and message the
/// catalogs hold for the error's reason code (`error.<code>.heading`, `error.<code>.message` in `Locales/`).
package struct WebErrorPresenter: ErrorPresenter {
    /// What the page says, before it is rendered.
    package struct Description: Equatable {
        package var status: Int
        /// The stable code: the `reason` label of the rejection metrics and logs.
        package var reasonCode: String
        /// The catalog entry (`error.<wordingCode>.*`) when it differs from the reason code.
        package var wordingCode: String?
        package var arguments: [String: String] = [:]
        package var count: Int?
        package var detail: String?
        package var action: PageAction? = .tryAgain
        /// Seconds after which the page continues by itself (a rate limit's wait).
        package var countdown: Int?
        /// Said calmly, without the alarm icon and status line: nothing went wrong for the person.
        package var calm = false
        /// Whose wording to show if the catalogs have none for this code (a rejection code added to the verifier later).
        package var fallbackCode = "internal_error"

        package init(status: Int, reasonCode: String, wordingCode: String? = nil, arguments: [String: String] = [:],
                     count: Int? = nil, detail: String? = nil, action: PageAction? = .tryAgain, countdown: Int? = nil,
                     calm: Bool = false, fallbackCode: String = "internal_error") {
            self.status = status
            self.reasonCode = reasonCode
            self.wordingCode = wordingCode
            self.arguments = arguments
            self.count = count
            self.detail = detail
            self.action = action
            self.countdown = countdown
            self.calm = calm
            self.fallbackCode = fallbackCode
        }

        package var catalogCode: String { wordingCode ?? reasonCode }
    }

    /// Friendly words for a GET (a reload, a bookmark) on an address that only takes a form post, and where to go.
    package static let postOnlyPages: [String: (code: String, action: PageAction)] = [
        "/apple_redirect": ("get_apple_redirect", .signIn),
        "/logout": ("get_logout", .account),
        "/account/delete": ("get_account_delete", .account),
    ]

    package let pages: Pages

    package init(pages: Pages) {
        self.pages = pages
    }

    package func response(for error: any Error, to request: Request) -> Response? {
        if let error = error as? HTTPError {
            var response = page(Self.describe(httpError: error, request: request))
            for field in error.headers { response.headers.set(field.name, field.value) }
            return response
        }
        guard let description = Self.describe(error) else { return nil }
        var response = page(description)
        if let limited = error as? RateLimited { response.headers.set("Retry-After", String(limited.retryAfter)) }
        if StoreOutage.isOutage(error) {
            response.headers.set("Retry-After", String(StoreOutage.retryAfterSeconds))
        } else if description.status == 503 {
            response.headers.set("Retry-After", String(AppleServices.retryAfterSeconds))
        }
        return response
    }

    package func internalError(for request: Request) -> Response {
        page(Description(status: 500, reasonCode: "internal_error", action: nil))
    }

    package func page(_ description: Description) -> Response {
        var code = description.catalogCode
        if !pages.catalogs.contains("error.\(code).heading") { code = description.fallbackCode }
        // The precise reason stays machine-readable on the page (for support and tests), not in the words.
        var extra: [String: MustacheValue] = ["reason": .string(description.reasonCode)]
        if description.calm { extra["isFailure"] = false }
        if let seconds = description.countdown {
            extra["countdown"] = .object(["seconds": .int(seconds), "forms": .object(pages.pluralForms("error.\(code).message", language: nil))])
        }
        return pages.error(status: description.status, reason: code, count: description.count,
                           arguments: description.arguments, detail: description.detail, action: description.action,
                           extra: extra)
    }

    /// An error the HTTP layer raised (no route, wrong method, a bad static path, a body that is not a form), or the
    /// listener (a body too large, too many requests at once, no worker free).
    package static func describe(httpError error: HTTPError, request: Request) -> Description {
        if error.status == 405, request.method == "GET" || request.method == "HEAD",
           let friendly = postOnlyPages[request.path] {
            return Description(status: 405, reasonCode: friendly.code, action: friendly.action, calm: true)
        }
        let code = switch error.status {
        case 404: request.path.utf8.starts(with: "/public/".utf8) ? "file_not_found" : "not_found"
        case 405: "method_not_allowed"
        case 400 where request.path.utf8.starts(with: "/public/".utf8): "file_path_not_allowed"
        case 400: "request_refused"
        case 413: "body_too_large"
        case 415: "form_required"
        case 429: "too_many_requests"
        case 503: "server_busy"
        default: "internal_error"
        }
        return Description(status: error.status, reasonCode: code, action: .signIn)
    }

    /// The status and reason code of an error a person can be shown; nil for an error that is not theirs.
    package static func describe(_ error: any Error) -> Description? {
        switch error {
        case let refusal as PageRefusal: describe(refusal: refusal)
        case let failure as SignInFailure: describe(failure: failure)
        case let error as StoreError where StoreOutage.isOutage(error):
            Description(status: 503, reasonCode: "database_unavailable", action: .tryAgain)
        case let limited as RateLimited:
            // The page waits and then continues by itself, so its button never leads straight back into the limit.
            Description(status: 429, reasonCode: "too_many_sign_in_attempts", wordingCode: "rate_limited",
                        count: limited.retryAfter, action: .tryAgain, countdown: limited.retryAfter)
        default: nil
        }
    }

    package static func describe(refusal: PageRefusal) -> Description {
        switch refusal {
        case .missingState: Description(status: 400, reasonCode: "missing_state")
        case .unknownState: Description(status: 400, reasonCode: "unknown_state")
        case .stateExpired: Description(status: 400, reasonCode: "state_expired")
        case .stateFromOtherBrowser: Description(status: 403, reasonCode: "state_other_browser")
        case .missingIDToken: Description(status: 400, reasonCode: "missing_id_token")
        case let .appleReportedError(error):
            Description(status: 400, reasonCode: "apple_error_" + (error?.rawValue ?? "other"), wordingCode: "apple_error",
                        arguments: ["code": error?.rawValue ?? "other"])
        case .signOutNotFromThisSite: Description(status: 403, reasonCode: "sign_out_refused", action: .account)
        case .deletionNotFromThisSite: Description(status: 403, reasonCode: "deletion_refused", action: .account)
        case .duplicateCookie: Description(status: 400, reasonCode: "duplicate_cookie")
        case .invitationUnusable: Description(status: 410, reasonCode: "invitation_unusable")
        case .unknownAndroidApp: Description(status: 404, reasonCode: "unknown_android_app")
        }
    }

    package static func describe(failure: SignInFailure) -> Description {
        switch failure {
        case let .tokenRejected(rejection):
            return Description(status: rejection == .keysUnavailable ? 503 : 401, reasonCode: rejection.code,
                               fallbackCode: "token_rejected")
        case .codeExchange(.missingCode): return Description(status: 400, reasonCode: "missing_code")
        case .codeExchange(.appleUnavailable): return Description(status: 503, reasonCode: "code_exchange_unavailable")
        case .codeExchange(.serverMisconfigured): return Description(status: 502, reasonCode: "apple_rejected_server")
        case .codeExchange(.codeRefused): return Description(status: 401, reasonCode: "code_exchange_failed")
        case .tokenReplayed: return Description(status: 409, reasonCode: "token_replayed")
        case .loginAttemptAlreadyUsed: return Description(status: 400, reasonCode: "state_used")
        case .nonceExpired: return Description(status: 401, reasonCode: "nonce_expired")
        case .nonceAlreadyUsed: return Description(status: 409, reasonCode: "nonce_already_used")
        case .nonceRequired, .nonceNotSent: return Description(status: 401, reasonCode: "nonce_required")
        }
    }
}
