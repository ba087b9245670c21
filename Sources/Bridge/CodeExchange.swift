import AppleID
import Foundation
import HTTPServer
import Storage

/// Exchanging the authorization code at Apple after the identity token verified: the answer reflects it, and
/// Apple's refresh token is kept (encrypted) for revocation when the account is deleted.
extension BridgeApp {
    enum ExchangeOutcome {
        /// No key configured or no code sent: nothing to do.
        case skipped
        case exchanged(TokenExchange)
        case failed(AppleTokenError)
    }

    func exchangeCode(_ code: String?, identity: AppleIdentity, flow: SignInFlow) -> ExchangeOutcome {
        guard let appleTokens, let code, !code.isEmpty else { return .skipped }
        // Web codes were issued for our redirect_uri; native codes (bundle-ID audience) have none.
        let redirectURI = identity.audience == configuration.servicesID ? configuration.redirectURI : nil
        do {
            let exchange = try appleTokens.exchange(code: code, clientID: identity.audience, redirectURI: redirectURI,
                                                    expectedSubject: identity.subject)
            metrics.increment("bridge_code_exchanges_total", ["result": "ok"])
            return .exchanged(exchange)
        } catch {
            metrics.increment("bridge_code_exchanges_total", ["result": "failed"])
            logger.warning("code_exchange_failed", ["flow": flow.rawValue, "client_id": identity.audience,
                                                    "reason": error.description])
            return .failed(error)
        }
    }

    /// Why a required exchange stops the sign-in, or nil when it may go on.
    enum ExchangeRefusal {
        /// No code came with the sign-in.
        case missingCode
        /// Apple cannot be reached or answered with something unusable: try again later.
        case appleUnavailable
        /// Apple refused this server's own credentials: an operator has to fix the configuration.
        case serverMisconfigured
        /// Apple refused the code (expired, used, another client) or its id_token did not match.
        case codeRefused
    }

    /// Exchange must succeed when APPLE_REQUIRE_CODE_EXCHANGE=1; otherwise a failure is only logged.
    func exchangeRefusal(_ outcome: ExchangeOutcome, codeSent: Bool) -> ExchangeRefusal? {
        guard configuration.requireCodeExchange else { return nil }
        switch outcome {
        case .exchanged: return nil
        case .skipped: return codeSent ? .serverMisconfigured : .missingCode
        case .failed(.unreachable), .failed(.invalidResponse), .failed(.idTokenRejected(.keysUnavailable)):
            return .appleUnavailable
        case .failed(.apple(code: "invalid_client", advice: _)), .failed(.clientSecretUnavailable): return .serverMisconfigured
        case .failed: return .codeRefused
        }
    }

    /// A sign-in refused after its code was exchanged must not leave a live grant at Apple behind.
    func discard(_ outcome: ExchangeOutcome, clientID: String) {
        guard case let .exchanged(exchange) = outcome, let refresh = exchange.refreshToken, let appleTokens else { return }
        let logger = logger
        DispatchQueue.global().async {
            do {
                try appleTokens.revoke(token: refresh, clientID: clientID)
            } catch {
                logger.warning("apple_revocation_of_unused_grant_failed", ["reason": String(describing: error)])
            }
        }
    }

    /// Inside the sign-in's transaction: keep Apple's refresh token, encrypted.
    func storeAppleToken(_ outcome: ExchangeOutcome, userID: Int64, clientID: String,
                         transaction: any StoreTransaction, now: Date) throws {
        guard case let .exchanged(exchange) = outcome, let refresh = exchange.refreshToken else { return }
        try transaction.upsertAppleToken(AppleTokenRecord(
            userID: userID, clientID: clientID, encryptedRefreshToken: try vault.seal(refresh, clientID: clientID),
            updatedAt: now))
    }
}
