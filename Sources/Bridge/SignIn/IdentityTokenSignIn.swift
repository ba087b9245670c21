import AppleID
import HTTPServer
import Storage

/// What finishes a sign-in from an identity token, on the web callback and in the JSON API alike: leave the
/// listener when Apple will be called, verify the token, exchange its code, and run the sign-in transaction.
struct IdentityTokenSignIn: Sendable {
    let verifier: IdentityTokenVerifier
    let exchanger: CodeExchanger
    let service: SignInService
    /// APPLE_REQUIRE_NONCE: a token without a `nonce` claim is refused on every path.
    let requireNonce: Bool

    /// Throws `OffListenerRequired` on a listener thread when exchanging `code` calls Apple.
    func leaveListener(_ request: Request, code: String?) throws(OffListenerRequired) {
        try AppleCalls.leaveListener(request, if: exchanger.callsApple(code: code))
    }

    /// Verifies `idToken`, fetching Apple's keys only off the listener: on a listener thread a token whose key is
    /// not held (or is due a refresh) throws `OffListenerRequired`, before any side effect (verifying writes
    /// nothing), and the worker runs the request again. Otherwise throws the `TokenRejection`. `nonceRequired`:
    /// the caller's own reason to refuse a token without a `nonce` claim, besides APPLE_REQUIRE_NONCE.
    func verify(_ idToken: String, expectedNonce: String?, code: String?, nonceRequired: Bool = false,
                _ request: Request) throws -> AppleIdentity {
        let context = VerificationContext(expectedNonce: expectedNonce, authorizationCode: code,
                                          requireNonce: nonceRequired || requireNonce)
        if request.isOffListener { return try verifier.verify(idToken, context: context, fetchingKeys: true) }
        guard let identity = try verifier.verifyIfKeyHeld(idToken, context: context) else { throw OffListenerRequired() }
        return identity
    }

    /// The sign-in of a verified identity; exchanges its code at Apple (or skips or postpones the exchange).
    func request(_ identity: AppleIdentity, identityToken: String, code: String?, flow: SignInFlow, proof: SignInProof,
                 displayName: String?, grant: SessionGrant,
                 alongside: (@Sendable (any StoreTransaction, User) throws -> Void)? = nil) -> SignInRequest {
        SignInRequest(identity: identity, identityToken: identityToken, flow: flow, proof: proof,
                      codeExchange: exchanger.exchange(code: code, identity: identity, flow: flow),
                      displayName: displayName, grant: grant, alongside: alongside)
    }
}
