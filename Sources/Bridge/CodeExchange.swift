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

    /// Whether the sign-in may go on after the exchange: it must succeed when APPLE_REQUIRE_CODE_EXCHANGE=1.
    func exchangeAllowsSignIn(_ outcome: ExchangeOutcome) -> Bool {
        guard configuration.requireCodeExchange else { return true }
        if case .exchanged = outcome { return true }
        return false
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
