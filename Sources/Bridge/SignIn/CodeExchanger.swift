import AppleID
import Foundation
import HTTPServer

/// What came of exchanging a sign-in's authorization code at Apple.
struct CodeExchange: Sendable {
    enum Outcome: Sendable {
        /// No key configured or no code sent: nothing to do.
        case skipped
        case exchanged(TokenExchange)
        case failed(AppleTokenError)
    }

    var outcome: Outcome
    /// Whether the sign-in carried a code at all.
    var codeSent: Bool

    static let skipped = CodeExchange(outcome: .skipped, codeSent: false)

    /// Apple's refresh token, kept (encrypted) so the grant can be revoked when the account is deleted.
    var appleRefreshToken: String? {
        guard case let .exchanged(exchange) = outcome else { return nil }
        return exchange.refreshToken
    }
}

/// Exchanges the authorization code at Apple after the identity token verified, decides whether a failed exchange
/// stops the sign-in, and gives back a grant that a refused sign-in leaves unused.
struct CodeExchanger: Sendable {
    let client: AppleTokenClient?
    let servicesID: String?
    let redirectURI: String
    /// APPLE_REQUIRE_CODE_EXCHANGE: the exchange must succeed; otherwise a failure is only logged.
    let isRequired: Bool
    let metrics: Metrics
    let logger: Logger

    func exchange(code: String?, identity: AppleIdentity, flow: SignInFlow) -> CodeExchange {
        let codeSent = !(code ?? "").isEmpty
        guard let client, let code, codeSent else { return CodeExchange(outcome: .skipped, codeSent: codeSent) }
        // Web codes were issued for our redirect_uri; native codes (bundle-ID audience) have none.
        let redirectURI = identity.audience == servicesID ? redirectURI : nil
        do {
            let exchange = try client.exchange(code: code, clientID: identity.audience, redirectURI: redirectURI,
                                               expectedSubject: identity.subject)
            metrics.increment("bridge_code_exchanges_total", ["result": "ok"])
            return CodeExchange(outcome: .exchanged(exchange), codeSent: true)
        } catch {
            metrics.increment("bridge_code_exchanges_total", ["result": "failed"])
            logger.warning("code_exchange_failed", ["flow": flow.rawValue, "client_id": identity.audience,
                                                    "reason": error.description])
            return CodeExchange(outcome: .failed(error), codeSent: true)
        }
    }

    /// Why this exchange stops the sign-in, or nil when the sign-in may go on.
    func refusal(_ exchange: CodeExchange) -> CodeExchangeRefusal? {
        Self.refusal(exchange, isRequired: isRequired)
    }

    static func refusal(_ exchange: CodeExchange, isRequired: Bool) -> CodeExchangeRefusal? {
        guard isRequired else { return nil }
        switch exchange.outcome {
        case .exchanged: return nil
        case .skipped: return exchange.codeSent ? .serverMisconfigured : .missingCode
        case let .failed(error): return refusal(error)
        }
    }

    static func refusal(_ error: AppleTokenError) -> CodeExchangeRefusal {
        switch error {
        case .unreachable, .invalidResponse, .idTokenRejected(.keysUnavailable): .appleUnavailable
        case .clientSecretUnavailable: .serverMisconfigured
        case .apple where error.appleOAuthError == .invalidClient: .serverMisconfigured
        default: .codeRefused
        }
    }

    /// A sign-in refused after its code was exchanged must not leave a live grant at Apple behind.
    func discard(_ exchange: CodeExchange, clientID: String) {
        guard let refresh = exchange.appleRefreshToken, let client else { return }
        let logger = logger
        DispatchQueue.global().async {
            do {
                try client.revoke(token: refresh, clientID: clientID)
            } catch {
                logger.warning("apple_revocation_of_unused_grant_failed", ["reason": String(describing: error)])
            }
        }
    }
}
