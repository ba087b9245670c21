/// The words of every error a person sees on a page, keyed by the error's stable reason code: a heading and a
/// message. A message may name a value to fill in as `{name}`. Reason codes are also the `reason` label of the
/// rejection metrics, so they never change once shipped.
enum ErrorWording {
    struct Entry: Sendable, Equatable {
        let heading: String
        let message: String
    }

    /// The wording of `code`, with `{name}` placeholders filled from `arguments`; nil for a code not in the table.
    static func wording(for code: String, arguments: [String: String] = [:]) -> Entry? {
        guard let entry = english[code] else { return nil }
        var message = entry.message
        for (name, value) in arguments { message = message.replacingOccurrences(of: "{\(name)}", with: value) }
        return Entry(heading: entry.heading, message: message)
    }

    private static let cannotFinish = "This sign-in cannot be finished"
    private static let notVerified = "We could not verify your Apple sign-in"
    private static let appleUnreachable = "Apple cannot be reached right now"
    private static let appleProblem = "Apple could not complete the sign-in"
    private static let tryAgain = "We could not verify your sign-in with Apple, so you have not been signed in. Please try again."
    private static let tooLate = "Your Apple sign-in took too long and has expired. Please sign in again."
    private static let notThisSignIn = "This Apple sign-in does not belong to the sign-in you started here. Please start again."
    private static let startAgain = "Please try again; if it keeps happening, tell the site's operators."

    static let english: [String: Entry] = [
        // The callback's state and binding.
        "missing_state": Entry(heading: cannotFinish, message: "The answer from Apple did not say which sign-in it belongs to. Please start again."),
        "unknown_state": Entry(heading: cannotFinish, message: "We do not know this sign-in. It may have been started on another server or already cleaned up. Please start again."),
        "state_used": Entry(heading: "This sign-in was already used", message: "Each sign-in link works once. If you are not signed in, please start again."),
        "state_expired": Entry(heading: "This sign-in has expired", message: "Sign-ins must be finished within 10 minutes. Please start again."),
        "state_other_browser": Entry(heading: "This sign-in was started in another browser", message: "For your safety a sign-in must be finished in the browser that started it. Please start again here."),
        "missing_id_token": Entry(heading: cannotFinish, message: "Apple's answer did not include an identity token. Please start again."),
        "token_replayed": Entry(heading: "This Apple sign-in was already used", message: "Each answer from Apple can sign you in once. Please start again."),
        // The identity token (one entry per rejection code of the verifier; `token_rejected` for any other).
        "apple_keys_unavailable": Entry(heading: appleUnreachable, message: "We could not reach Apple to check your sign-in. Please try again in a minute."),
        "token_expired": Entry(heading: notVerified, message: tooLate),
        "issued_too_long_ago": Entry(heading: notVerified, message: tooLate),
        "nonce_mismatch": Entry(heading: notVerified, message: notThisSignIn),
        "missing_nonce": Entry(heading: notVerified, message: notThisSignIn),
        "code_hash_mismatch": Entry(heading: notVerified, message: notThisSignIn),
        "malformed_token": Entry(heading: notVerified, message: tryAgain),
        "algorithm_not_allowed": Entry(heading: notVerified, message: tryAgain),
        "missing_kid": Entry(heading: notVerified, message: tryAgain),
        "unknown_kid": Entry(heading: notVerified, message: tryAgain),
        "bad_signature": Entry(heading: notVerified, message: tryAgain),
        "wrong_issuer": Entry(heading: notVerified, message: tryAgain),
        "wrong_audience": Entry(heading: notVerified, message: tryAgain),
        "issued_in_future": Entry(heading: notVerified, message: tryAgain),
        "missing_subject": Entry(heading: notVerified, message: tryAgain),
        "token_rejected": Entry(heading: notVerified, message: tryAgain),
        // Server nonces (the API's; a page shows them only if a web route ever spends one).
        "nonce_expired": Entry(heading: "This sign-in has expired", message: "The sign-in took too long. Please start again."),
        "nonce_already_used": Entry(heading: "This sign-in was already used", message: "Each sign-in works once. If you are not signed in, please start again."),
        "nonce_required": Entry(heading: cannotFinish, message: notThisSignIn),
        // The code exchange at Apple.
        "missing_code": Entry(heading: cannotFinish, message: "Apple's answer did not include an authorization code, which this service requires. Please start again."),
        "code_exchange_unavailable": Entry(heading: appleUnreachable, message: "We could not confirm your sign-in with Apple. Please try again in a minute."),
        "apple_rejected_server": Entry(heading: "Sign in with Apple is misconfigured here", message: "Apple did not accept this service's credentials, so sign-in cannot finish. The site's operators have been told in their logs."),
        "code_exchange_failed": Entry(heading: "Apple did not confirm this sign-in", message: "Apple did not confirm the sign-in code, so you have not been signed in. Please start again."),
        // Errors Apple reported to the callback.
        "user_cancelled": Entry(heading: "Sign-in cancelled", message: "You cancelled signing in with Apple. Nothing was changed. You can try again whenever you like."),
        "apple_error_invalid_request": Entry(heading: appleProblem, message: "Apple reported a problem (invalid_request). " + startAgain),
        "apple_error_invalid_client": Entry(heading: appleProblem, message: "Apple reported a problem (invalid_client). " + startAgain),
        "apple_error_invalid_grant": Entry(heading: appleProblem, message: "Apple reported a problem (invalid_grant). " + startAgain),
        "apple_error_unauthorized_client": Entry(heading: appleProblem, message: "Apple reported a problem (unauthorized_client). " + startAgain),
        "apple_error_unsupported_response_type": Entry(heading: appleProblem, message: "Apple reported a problem (unsupported_response_type). " + startAgain),
        "apple_error_invalid_scope": Entry(heading: appleProblem, message: "Apple reported a problem (invalid_scope). " + startAgain),
        "apple_error_access_denied": Entry(heading: appleProblem, message: "Apple reported a problem (access_denied). " + startAgain),
        "apple_error_other": Entry(heading: appleProblem, message: "Apple reported a problem (other). " + startAgain),
        // Pages of a signed-in person.
        "too_many_sign_in_attempts": Entry(heading: "Too many sign-in attempts", message: "Please wait {seconds} seconds and try again."),
        "sign_out_refused": Entry(heading: "Sign-out refused", message: "This sign-out request did not come from this site. Use the Sign out button on your session page."),
        "deletion_refused": Entry(heading: "Deletion refused", message: "This request did not come from this site. Use the Delete account button on your session page."),
        // A cookie of ours sent twice (one planted by another site).
        "duplicate_cookie": Entry(heading: "Your browser sent conflicting cookies", message: "Your browser sent two cookies with the same name for this site, so we cannot tell which sign-in is yours. Please clear this site's cookies in your browser settings, then sign in again."),
        // Whatever else: the heading of an error the HTTP layer raised (its message comes with it).
        "not_found": Entry(heading: "Page not found", message: "There is no page at this address."),
        "database_unavailable": Entry(heading: "We are briefly unavailable", message: "Our database cannot be reached right now. Nothing of this request was saved; please try again in a few seconds."),
        "internal_error": Entry(heading: "Internal Server Error", message: "The server could not answer this request. Please try again."),
    ]
}
