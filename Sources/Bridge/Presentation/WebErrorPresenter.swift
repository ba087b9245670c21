import AppleID
import HTTPServer
import Storage

/// Turns what a page route threw into the error page a person sees: the status, and the heading and message that
/// `ErrorWording` holds for the error's reason code.
struct WebErrorPresenter: ErrorPresenter {
    /// What the page says, before it is rendered.
    struct Description: Equatable {
        var status: Int
        var reasonCode: String
        var arguments: [String: String] = [:]
        var detail: String?
        var retryURL: String? = "/login"
        /// Whose wording to show if the table has none for `reasonCode` (a rejection code added to the verifier later).
        var fallbackReasonCode = "internal_error"
    }

    let pages: Pages

    func response(for error: any Error, to request: Request) -> Response? {
        if let error = error as? HTTPError {
            let heading = error.status == 404 ? ErrorWording.wording(for: "not_found")?.heading : nil
            var response = pages.error(status: error.status, heading: heading ?? HTTPError.reasonPhrase(error.status),
                                       message: error.message, retryURL: nil)
            for field in error.headers { response.headers.set(field.name, field.value) }
            return response
        }
        guard let description = Self.describe(error) else { return nil }
        var response = page(description)
        if let limited = error as? RateLimited { response.headers.set("Retry-After", String(limited.retryAfter)) }
        if StoreOutage.isOutage(error) { response.headers.set("Retry-After", String(StoreOutage.retryAfterSeconds)) }
        return response
    }

    func internalError(for request: Request) -> Response {
        page(Description(status: 500, reasonCode: "internal_error", retryURL: nil))
    }

    func page(_ description: Description) -> Response {
        let wording = ErrorWording.wording(for: description.reasonCode, arguments: description.arguments)
            ?? ErrorWording.wording(for: description.fallbackReasonCode)
            ?? ErrorWording.Entry(heading: HTTPError.reasonPhrase(description.status), message: "")
        return pages.error(status: description.status, heading: wording.heading, message: wording.message,
                           detail: description.detail, retryURL: description.retryURL)
    }

    /// The status and reason code of an error a person can be shown; nil for an error that is not theirs.
    static func describe(_ error: any Error) -> Description? {
        switch error {
        case let refusal as PageRefusal: describe(refusal: refusal)
        case let failure as SignInFailure: describe(failure: failure)
        case let error as StoreError where StoreOutage.isOutage(error):
            Description(status: 503, reasonCode: "database_unavailable", retryURL: nil)
        case let limited as RateLimited:
            Description(status: 429, reasonCode: "too_many_sign_in_attempts",
                        arguments: ["seconds": String(limited.retryAfter)], retryURL: nil)
        default: nil
        }
    }

    static func describe(refusal: PageRefusal) -> Description {
        switch refusal {
        case .missingState: Description(status: 400, reasonCode: "missing_state")
        case .unknownState: Description(status: 400, reasonCode: "unknown_state")
        case .stateExpired: Description(status: 400, reasonCode: "state_expired")
        case .stateFromOtherBrowser: Description(status: 403, reasonCode: "state_other_browser")
        case .missingIDToken: Description(status: 400, reasonCode: "missing_id_token")
        case let .appleReportedError(error): Description(status: 400, reasonCode: "apple_error_" + (error?.rawValue ?? "other"))
        case .signOutNotFromThisSite: Description(status: 403, reasonCode: "sign_out_refused", retryURL: "/session")
        case .deletionNotFromThisSite: Description(status: 403, reasonCode: "deletion_refused", retryURL: "/session")
        case .duplicateCookie: Description(status: 400, reasonCode: "duplicate_cookie")
        }
    }

    static func describe(failure: SignInFailure) -> Description {
        switch failure {
        case let .tokenRejected(rejection):
            return Description(status: rejection == .keysUnavailable ? 503 : 401, reasonCode: rejection.code,
                               detail: "Reason: \(rejection.description).", fallbackReasonCode: "token_rejected")
        case .codeExchange(.missingCode): return Description(status: 400, reasonCode: "missing_code")
        case .codeExchange(.appleUnavailable): return Description(status: 503, reasonCode: "code_exchange_unavailable")
        case .codeExchange(.serverMisconfigured): return Description(status: 502, reasonCode: "apple_rejected_server")
        case .codeExchange(.codeRefused): return Description(status: 401, reasonCode: "code_exchange_failed")
        case .tokenReplayed: return Description(status: 409, reasonCode: "token_replayed")
        case .loginAttemptAlreadyUsed: return Description(status: 400, reasonCode: "state_used")
        case .nonceExpired: return Description(status: 401, reasonCode: "nonce_expired")
        case .nonceAlreadyUsed: return Description(status: 409, reasonCode: "nonce_already_used")
        case .nonceRequired: return Description(status: 401, reasonCode: "nonce_required")
        }
    }
}
