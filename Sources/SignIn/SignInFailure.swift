import AppleID

/// Why a sign-in did not finish, whichever route it came through. Each route group turns it into its own
/// status and words; nothing here knows HTTP.
package enum SignInFailure: Error, Equatable {
    /// The identity token did not verify.
    case tokenRejected(TokenRejection)
    /// A required code exchange did not succeed.
    case codeExchange(CodeExchangeRefusal)
    /// This identity token already signed someone in.
    case tokenReplayed
    /// The web login attempt was spent by another callback first.
    case loginAttemptAlreadyUsed
    /// The server nonce is expired (or already cleaned up).
    case nonceExpired
    /// The server nonce was spent by another sign-in.
    case nonceAlreadyUsed
    /// A token for the web Services ID came without a nonce this server issued.
    case nonceRequired
    /// A JSON-API token carrying a nonce came without the `nonce` field (and APPLE_ACCEPT_UNSENT_NONCE is off).
    case nonceNotSent
}

/// Why a required code exchange stops the sign-in.
package enum CodeExchangeRefusal: Equatable {
    /// No code came with the sign-in.
    case missingCode
    /// Apple cannot be reached or answered with something unusable: try again later.
    case appleUnavailable
    /// Apple refused this server's own credentials: an operator has to fix the configuration.
    case serverMisconfigured
    /// Apple refused the code (expired, used, another client) or its id_token did not match.
    case codeRefused
}
