import AppleID
import BridgeMetrics
import Foundation
import Logging
import TextBytes

/// What came of exchanging a sign-in's authorization code at Apple.
package struct CodeExchange: Sendable {
    package enum Outcome: Sendable {
        /// No key configured or no code sent: nothing to do.
        case skipped
        case exchanged(TokenExchange)
        case failed(AppleTokenError)
    }

    package var outcome: Outcome
    /// Whether the sign-in carried a code at all.
    package var codeSent: Bool
    /// What a later retry needs, kept only when the exchange failed in a way a retry may mend.
    package var retry: CodeExchangeRetrier.Pending?

    package init(outcome: Outcome, codeSent: Bool, retry: CodeExchangeRetrier.Pending? = nil) {
        self.outcome = outcome
        self.codeSent = codeSent
        self.retry = retry
    }

    package static let skipped = CodeExchange(outcome: .skipped, codeSent: false)

    /// Apple's refresh token, kept (encrypted) so the grant can be revoked when the account is deleted.
    package var appleRefreshToken: String? {
        guard case let .exchanged(exchange) = outcome else { return nil }
        return exchange.refreshToken
    }
}

/// Exchanges the authorization code at Apple after the identity token verified, decides whether a failed exchange
/// stops the sign-in, and gives back a grant that a refused sign-in leaves unused.
package struct CodeExchanger: Sendable {
    package let client: AppleTokenClient?
    package let servicesID: String?
    package let redirectURI: String
    /// APPLE_REQUIRE_CODE_EXCHANGE: the exchange must succeed; otherwise a failure is only logged.
    package let isRequired: Bool
    /// Retries, in the background, exchanges a sign-in went on without; nil when exchanges are required.
    package let metrics: Metrics
    package let logger: Logger
    package var retrier: CodeExchangeRetrier? = nil
    /// The codes the Android relay handed over, whose redirect URI is the relay's; nil when the relay is off.
    package var relayedCodes: RelayedCodes? = nil

    package init(client: AppleTokenClient?, servicesID: String?, redirectURI: String, isRequired: Bool,
                 metrics: Metrics, logger: Logger, retrier: CodeExchangeRetrier? = nil,
                 relayedCodes: RelayedCodes? = nil) {
        self.client = client
        self.servicesID = servicesID
        self.redirectURI = redirectURI
        self.isRequired = isRequired
        self.metrics = metrics
        self.logger = logger
        self.retrier = retrier
        self.relayedCodes = relayedCodes
    }

    /// Whether exchanging `code` now means calling Apple, so the sign-in continues off the listener. False when Apple is not to be called now (too many calls in flight, or the breaker
    /// is open): the exchange then fails at once, and the sign-in is answered without waiting.
    package func callsApple(code: String?) -> Bool {
        guard let client, let code, !code.isEmpty else { return false }
        return client.wouldCall(AppleTokenClient.tokenPath)
    }

    /// Exchanges the code, giving up at `deadline` (the request's budget for Apple). Throws only when the store
    /// cannot say whether the relay handed the code over.
    package func exchange(code: String?, identity: AppleIdentity, flow: SignInFlow,
                          deadline: Date = Date().addingTimeInterval(AppleServices.requestBudget)) throws -> CodeExchange {
        let codeSent = !(code ?? "").isEmpty
        guard let client, let code, codeSent else { return CodeExchange(outcome: .skipped, codeSent: codeSent) }
        let redirectURI = try redirectURI(for: code, identity: identity, flow: flow)
        do {
            let exchange = try client.exchange(code: code, clientID: identity.audience, redirectURI: redirectURI,
                                               expectedSubject: identity.subject, deadline: deadline)
            metrics.increment("bridge_code_exchanges_total", ["result": "ok"])
            return CodeExchange(outcome: .exchanged(exchange), codeSent: true)
        } catch {
            metrics.increment("bridge_code_exchanges_total", ["result": Self.isNotAttempted(error) ? "not_attempted" : "failed"])
            logger.warning("code_exchange_failed", ["flow": flow.rawValue, "client_id": identity.audience,
                                                    "reason": error.description])
            var failed = CodeExchange(outcome: .failed(error), codeSent: true)
            if retrier != nil && Self.isRetryable(error) {
                failed.retry = CodeExchangeRetrier.Pending(
                    code: code, clientID: identity.audience, redirectURI: redirectURI, subject: identity.subject,
                    userID: 0, firstTried: Date(), dueAt: Date().addingTimeInterval(CodeExchangeRetrier.firstDelay))
            }
            return failed
        }
    }

    /// The `redirect_uri` Apple issued `code` for, as the bridge knows it: none for a native code (a bundle ID's); for
    /// a Services ID's code that an app sends to the JSON API, the relay's URL when the relay handed it over; else
    /// `/apple_redirect`, where Apple posts every other web sign-in (the OpenID provider's too).
    package func redirectURI(for code: String, identity: AppleIdentity, flow: SignInFlow) throws -> String? {
        guard let servicesID, identity.audience.hasSameUTF8(as: servicesID) else { return nil }
        if flow == .api, let relayed = try relayedCodes?.redirectURI(forCode: code) { return relayed }
        return redirectURI
    }

    /// After the sign-in went on without its exchange, queues the exchange for a retry in the background.
    package func retryLater(_ exchange: CodeExchange, userID: Int64) {
        guard let retrier, var pending = exchange.retry else { return }
        pending.userID = userID
        retrier.enqueue(pending)
    }

    /// Apple was slow, failing or not called: a later try may succeed. Apple's refusals are final.
    package static func isRetryable(_ error: AppleTokenError) -> Bool {
        switch error {
        case .unreachable, .notAttempted: true
        default: false
        }
    }

    package static func isNotAttempted(_ error: AppleTokenError) -> Bool {
        if case .notAttempted = error { return true }
        return false
    }

    /// Why this exchange stops the sign-in, or nil when the sign-in may go on.
    package func refusal(_ exchange: CodeExchange) -> CodeExchangeRefusal? {
        Self.refusal(exchange, isRequired: isRequired)
    }

    package static func refusal(_ exchange: CodeExchange, isRequired: Bool) -> CodeExchangeRefusal? {
        guard isRequired else { return nil }
        switch exchange.outcome {
        case .exchanged: return nil
        case .skipped: return exchange.codeSent ? .serverMisconfigured : .missingCode
        case let .failed(error): return refusal(error)
        }
    }

    package static func refusal(_ error: AppleTokenError) -> CodeExchangeRefusal {
        switch error {
        case .unreachable, .notAttempted, .invalidResponse, .idTokenRejected(.keysUnavailable): .appleUnavailable
        case .clientSecretUnavailable: .serverMisconfigured
        case .apple where error.appleOAuthError == .invalidClient: .serverMisconfigured
        default: .codeRefused
        }
    }

    /// A sign-in refused after its code was exchanged must not leave a live grant at Apple behind.
    package func discard(_ exchange: CodeExchange, clientID: String) {
        guard let refresh = exchange.appleRefreshToken, let client else { return }
        let logger = logger
        DispatchQueue.global().async {
            do {
                try client.revoke(token: refresh, clientID: clientID,
                                  deadline: Date().addingTimeInterval(AppleServices.requestBudget))
            } catch {
                logger.warning("apple_revocation_of_unused_grant_failed", ["reason": String(describing: error)])
            }
        }
    }
}
