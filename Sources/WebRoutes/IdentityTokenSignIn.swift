import AppleID
import HTTPServer
import SignIn
import Storage

/// The one way a sign-in from an identity token finishes, on the web callback and in the JSON API alike: verify the
/// token, let the route refuse what it must of the verified identity, exchange its code, and run the sign-in
/// transaction; the route answers once it committed. When Apple will be called (a code to exchange, a key to
/// fetch) these steps continue off the listener, with what the route already checked.
/// A class: the steps that follow a sign-in's checks hold it, and a copy of the services it holds (a struct of them)
/// retained and released some 200 references per sign-in.
package final class IdentityTokenSignIn: Sendable {
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

    /// A route finishes the sign-in of `presented` in two steps, so that nothing it checked runs twice and its steps
    /// are not held in closures unless they continue elsewhere:
    ///
    ///     @Sendable func finish(_ identity: AppleIdentity) throws -> Reply {
    ///         signIn.write(try signIn.request(identity, presented, …), then: respond)  // after the route's refusals
    ///     }
    ///     if let identity = try signIn.verifiedHere(presented) { return try finish(identity) }
    ///     return .offListener { try finish(try signIn.verified(presented)) }
    ///
    /// The identity verified now with the keys held; nil when the sign-in calls Apple (its code is to be exchanged, or
    /// the token's key is not held or due a refresh), and continues off the listener, before any side effect
    /// (verifying writes nothing). `rejected` hears a token that does not verify, then thrown as
    /// `SignInFailure.tokenRejected`.
    package func verifiedHere(_ presented: Presented, rejected: (TokenRejection) -> Void = { _ in }) throws(SignInFailure) -> AppleIdentity? {
        guard !exchanger.callsApple(code: presented.code) else { return nil }
        do {
            return try verifier.verifyIfKeyHeld(presented.idToken, context: context(of: presented))
        } catch {
            rejected(error)
            throw .tokenRejected(error)
        }
    }

    /// The identity, verified where waiting is fine: the keys are fetched when they must be.
    package func verified(_ presented: Presented, rejected: (TokenRejection) -> Void = { _ in }) throws(SignInFailure) -> AppleIdentity {
        do {
            return try verifier.verify(presented.idToken, context: context(of: presented))
        } catch {
            rejected(error)
            throw .tokenRejected(error)
        }
    }

    private func context(of presented: Presented) -> VerificationContext {
        VerificationContext(expectedNonce: presented.expectedNonce, authorizationCode: presented.code,
                            requireNonce: presented.nonceRequired || requireNonce)
    }

    /// The sign-in's transaction, answered with `respond(its outcome)` once it committed.
    package func write(_ signInRequest: SignInRequest,
                       then respond: @escaping @Sendable (SignInRequest, Result<SignInWritten, any Error>) throws -> Response) -> Reply {
        .after(starting: { [self] in try service.startSignIn(signInRequest, completion: $0) }) { outcome in
            Reply(try respond(signInRequest, outcome))
        }
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
    /// Verifies `token` and replies with `next(the identity)`: here with the keys held, else, and whenever the next
    /// step calls Apple (`callingApple`), off the listener, where a key may be fetched; before any side effect
    /// (verifying writes nothing), and with nothing checked before it done again. A rejection is thrown as
    /// `refusing(it)`.
    package func verifying(_ token: String, context: VerificationContext, callingApple: Bool,
                           refusing refusal: @escaping @Sendable (TokenRejection) -> any Error,
                           then next: @escaping @Sendable (AppleIdentity) throws -> Reply) throws -> Reply {
        if !callingApple {
            let held: AppleIdentity?
            do { held = try verifyIfKeyHeld(token, context: context) } catch { throw refusal(error) }
            if let held { return try next(held) }
        }
        return .offListener { [self] in
            let identity: AppleIdentity
            do throws(TokenRejection) {
                identity = try verify(token, context: context)
            } catch {
                throw refusal(error)
            }
            return try next(identity)
        }
    }
}
