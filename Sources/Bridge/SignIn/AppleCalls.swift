import AppleID
import HTTPServer

/// The one rule for requests that may call Apple (a key fetch, a code exchange, a revocation): on a listener
/// thread, which serves many connections, such a request is handed to an off-listener worker before any side
/// effect, by throwing `OffListenerRequired`; the worker runs it again from the start.
struct AppleCalls: Sendable {
    let verifier: IdentityTokenVerifier
    let exchanger: CodeExchanger

    /// A sign-in calls Apple when its token's key is not held or its code will be exchanged.
    func signInCallsApple(idToken: String, code: String?) -> Bool {
        exchanger.callsApple(code: code) || !verifier.verifiesWithoutFetching(idToken)
    }

    /// Throws `OffListenerRequired` on a listener thread when verifying `idToken` or exchanging `code` calls Apple.
    func leaveListenerForSignIn(_ request: Request, idToken: String, code: String?) throws(OffListenerRequired) {
        try Self.leaveListener(request, if: signInCallsApple(idToken: idToken, code: code))
    }

    static func leaveListener(_ request: Request, if callsApple: Bool) throws(OffListenerRequired) {
        if callsApple && !request.isOffListener { throw OffListenerRequired() }
    }
}
