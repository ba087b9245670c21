import AppleID
import Foundation
import HTTPServer
import JOSE
import JSON
import Mustache
import Storage

/// Account deletion: revoke at Apple, then delete everything of the user. A revocation Apple does not accept
/// now is queued (still encrypted) and retried with backoff until it is: never silently dropped.
extension BridgeApp {
    enum RevocationResult: String {
        case revoked, queued, none
    }

    /// Deletes the user after trying to revoke their Apple token; returns what happened at Apple.
    func deleteAccount(userID: Int64) throws -> RevocationResult {
        let record = try store.read { try $0.appleToken(userID: userID) }
        var result = RevocationResult.none
        var queue: AppleTokenRecord?
        if let record {
            if let appleTokens, let token = try? vault.open(record.encryptedRefreshToken, clientID: record.clientID),
               (try? appleTokens.revoke(token: token, clientID: record.clientID)) != nil {
                result = .revoked
            } else {
                result = .queued
                queue = record
            }
        }
        let now = clock.now
        try store.write { transaction in
            if let queue {
                _ = try transaction.enqueueRevocation(clientID: queue.clientID, encryptedToken: queue.encryptedRefreshToken,
                                                      tokenTypeHint: "refresh_token", now: now)
            }
            try transaction.deleteUser(id: userID)
        }
        metrics.increment("bridge_accounts_deleted_total", ["apple_revocation": result.rawValue])
        logger.info("account_deleted", ["user_id": String(userID), "apple_revocation": result.rawValue])
        return result
    }

    /// One pass of the revocation queue; the background worker calls it, tests call it after moving the clock.
    @discardableResult
    public func processDueRevocations(limit: Int = 50) -> Int {
        guard let appleTokens else { return 0 }
        let now = clock.now
        guard let due = try? store.read({ try $0.dueRevocations(now: now, limit: limit) }) else { return 0 }
        var done = 0
        for item in due {
            do {
                let token = try vault.open(item.encryptedToken, clientID: item.clientID)
                try appleTokens.revoke(token: token, tokenTypeHint: item.tokenTypeHint, clientID: item.clientID)
                try store.write { try $0.completeRevocation(id: item.id) }
                done += 1
                logger.info("apple_revocation_completed", ["attempts": String(item.attempts + 1)])
            } catch AppleTokenError.apple(code: "invalid_grant", advice: _) {
                // Apple no longer knows the token (already revoked, or the user removed the app): nothing is left to do.
                _ = try? store.write { try $0.completeRevocation(id: item.id) }
                logger.info("apple_revocation_unneeded", ["attempts": String(item.attempts + 1)])
            } catch {
                // Backoff doubles from 30 s up to 6 h.
                let delay = min(30 * pow(2, Double(item.attempts)), 21_600)
                let reason = (error as? AppleTokenError)?.description ?? "the stored token could not be decrypted"
                _ = try? store.write { try $0.postponeRevocation(id: item.id, nextAttemptAt: now.addingTimeInterval(delay), error: reason) }
                logger.warning("apple_revocation_postponed", ["attempts": String(item.attempts + 1),
                                                               "retry_in_s": String(Int(delay)), "reason": reason])
            }
        }
        return done
    }

    // MARK: - Web: POST /account/delete (confirmation page first, CSRF-protected)

    func accountDelete(_ request: Request) throws -> Response {
        guard let (session, user) = try currentSession(request) else { return .redirect(to: "/login") }
        let form = request.formBody ?? FormFields()
        guard let presented = form["csrf"], ConstantTime.equals(presented, csrfToken(for: session)) else {
            return pages.error(status: 403, heading: "Deletion refused",
                               message: "This request did not come from this site. Use the Delete account button on your session page.",
                               retryURL: "/session")
        }
        guard form["confirm"] == "yes" else {
            var userContext: [String: MustacheValue] = [:]
            if let name = user.displayName { userContext["displayName"] = .string(name) }
            if let email = user.email { userContext["email"] = .string(email) }
            return pages.render("account-delete", ["title": "Delete your account", "csrfToken": .string(csrfToken(for: session)),
                                                   "user": .object(userContext)])
        }
        let result = try deleteAccount(userID: user.id)
        var response = pages.render("account-deleted", [
            "title": "Account deleted", "revoked": .bool(result == .revoked), "revocationPending": .bool(result == .queued),
            "nothingToRevoke": .bool(result == .none),
        ])
        response.setCookie(.expired(CookieNames.session))
        return response
    }

    // MARK: - API: DELETE /api/me

    func apiDeleteMe(_ request: Request) throws -> Response {
        let (_, user) = try authenticate(request)
        let result = try deleteAccount(userID: user.id)
        return .json(JSONValue.object(["deleted": true, "appleRevocation": .string(result.rawValue)]).serialized())
    }
}
