import AppleID
import HTTPServer
import SignIn
import Storage

/// The one way a sign-in from an identity token finishes, on the web callback and in the JSON API alike: leave the
/// listener when Apple will be called, verify the token, let the route refuse what it must of the verified
/// identity, exchange its code, and run the sign-in transaction; the route answers once it committed.
package struct IdentityTokenSignIn: Sendable {
    package let verifier: IdentityTokenVerifier
    package let exchanger: CodeExchanger
    package let service: SignInService
    /// APPLE_REQUIRE_NONCE: a token without a `nonce` claim is refused on every path.
    package let requireNonce: Bool

    package init(verifier: IdentityTokenVerifier, exchanger: CodeExchanger, service: SignInService,
                 requireNonce: Bool) {
        self.verifier = verifier
        self.exchanger = exchanger
        self.service = service
        self.requireNonce = requireNonce
    }

    /// The token as presented, and what its `nonce` claim must match.
    package struct Presented: Sendable {
        package var idToken: String
        package var code: String?
        /// The attempt's nonce, or the one the app sent.
        package var expectedNonce: String?
        /// The route's own reason to refuse a token without a `nonce` claim, besides APPLE_REQUIRE_NONCE.
        package var nonceRequired = false

        package init(idToken: String, code: String? = nil, expectedNonce: String? = nil, nonceRequired: Bool = false) {
            self.idToken = idToken
            self.code = code
            self.expectedNonce = expectedNonce
            self.nonceRequired = nonceRequired
        }
    }

    /// Finishes the sign-in of `presented`: `rejected` hears a token that does not verify (which is then thrown as
    /// `SignInFailure.tokenRejected`), `signIn` makes the sign-in of the verified identity (throwing what the route
    /// refuses; `request(…)` makes it), and `respond` answers with the transaction's outcome, on a listener thread
    /// once it committed. Throws `OffListenerRequired` on a listener thread when Apple will be called.
    package func finish(_ request: Request, _ presented: Presented, rejected: (TokenRejection) -> Void = { _ in },
                        signIn make: (AppleIdentity) throws -> SignInRequest,
                        then respond: @escaping @Sendable (SignInRequest, Result<SignInWritten, any Error>) throws -> Response) throws -> Response {
        try AppleCalls.leaveListener(request, if: exchanger.callsApple(code: presented.code))
        let identity: AppleIdentity
        do {
            identity = try verify(presented, request)
        } catch let rejection as TokenRejection {
            rejected(rejection)
            throw SignInFailure.tokenRejected(rejection)
        }
        let signInRequest = try make(identity)
        let service = service
        return try request.answer(afterStarting: { try service.startSignIn(signInRequest, completion: $0) }) { outcome in
            try respond(signInRequest, outcome)
        }
    }

    private func verify(_ presented: Presented, _ request: Request) throws -> AppleIdentity {
        let context = VerificationContext(expectedNonce: presented.expectedNonce, authorizationCode: presented.code,
                                          requireNonce: presented.nonceRequired || requireNonce)
        return try verifier.verify(presented.idToken, context: context, for: request)
    }

    /// The sign-in of a verified identity; exchanges its code at Apple (or skips or postpones the exchange).
    package func request(_ identity: AppleIdentity, _ presented: Presented, flow: SignInFlow, proof: SignInProof,
                         displayName: String?, grant: SessionGrant,
                         alongside: (@Sendable (any StoreTransaction, User) throws -> Void)? = nil) throws -> SignInRequest {
        SignInRequest(identity: identity, identityToken: presented.idToken, flow: flow, proof: proof,
                      codeExchange: try exchanger.exchange(code: presented.code, identity: identity, flow: flow),
                      displayName: displayName, grant: grant, alongside: alongside)
    }
}

extension IdentityTokenVerifier {
    /// Verifies `token` for `request`, fetching Apple's keys only off the listener: on a listener thread a token whose
    /// key is not held (or is due a refresh) throws `OffListenerRequired`, before any side effect (verifying writes
    /// nothing), and the worker runs the request again. Otherwise throws the `TokenRejection`.
    package func verify(_ token: String, context: VerificationContext, for request: Request) throws -> AppleIdentity {
        if request.isOffListener { return try verify(token, context: context, fetchingKeys: true) }
        guard let identity = try verifyIfKeyHeld(token, context: context) else { throw OffListenerRequired() }
        return identity
    }
}
