import AppleID
import BridgeMetrics
import Foundation
import Logging
import Storage
import Webhooks

/// Account deletion: revoke at Apple, then delete everything of the user. A revocation Apple does not accept
/// now is queued (still encrypted) and retried with backoff until it is: never silently dropped.
package struct AccountDeletion: Sendable {
    package enum RevocationResult: String, Sendable {
        case revoked, queued, none
    }

    /// What it reads and writes of the store.

    package typealias StoreRole = any AppleServerSideTransaction & MemberTransaction & WebhookOutboxTransaction

    package let store: StoreAccess<StoreRole>
    package let clock: WallClock
    package let vault: AppleTokenVault
    package let appleTokens: AppleTokenClient?
    package let metrics: Metrics
    package let logger: Logger
    /// BRIDGE_WEBHOOK_*: `member.deleted` written with the deletion; nil writes none.
    package var webhooks: WebhookEvents? = nil

    package init(store: StoreAccess<StoreRole>, clock: WallClock, vault: AppleTokenVault, appleTokens: AppleTokenClient?,
                 metrics: Metrics, logger: Logger, webhooks: WebhookEvents? = nil) {
        self.webhooks = webhooks
        self.store = store
        self.clock = clock
        self.vault = vault
        self.appleTokens = appleTokens
        self.metrics = metrics
        self.logger = logger
    }

    /// A member's deletion, decided: their Apple token, if any, and whether revoking it calls Apple now (then
    /// `delete` may wait for Apple: not on a thread that must not wait).
    package struct Plan: Sendable {
        package let userID: Int64
        package let record: AppleTokenRecord?
        package let callsApple: Bool

        package init(userID: Int64, record: AppleTokenRecord?, callsApple: Bool) {
            self.userID = userID
            self.record = record
            self.callsApple = callsApple
        }
    }

    package func plan(userID: Int64) throws -> Plan {
        let record = try store.read { try $0.appleToken(userID: userID) }
        return Plan(userID: userID, record: record,
                    callsApple: record != nil && appleTokens?.wouldCall(AppleTokenClient.revokePath) == true)
    }

    /// Tries to revoke the member's Apple token, then starts the write that deletes them; `completion` hears what
    /// happened at Apple once it committed (the deletion counted and logged), or the write's error.
    package func delete(_ plan: Plan, completion: @escaping @Sendable (Result<RevocationResult, any Error>) -> Void) {
        let revocation = plan.record.map(revokeAtApple) ?? .none
        let write = deletion(of: plan.userID, revocation: revocation, record: plan.record, requestedBy: .member)
        store.write(isolation: .serializable, write) { [self] outcome in
            completion(outcome.map { _ in
                recordDeletion(of: plan.userID, revocation)
                return revocation
            })
        }
    }

    /// The same deletion for the command line (`members delete`), waiting on Apple and on the commit in the calling
    /// thread. Nil when there is no such member.
    package func deleteAccount(userID: Int64) throws -> RevocationResult? {
        let (user, record) = try store.read { (try $0.user(id: userID), try $0.appleToken(userID: userID)) }
        guard user != nil else { return nil }
        let revocation = record.map(revokeAtApple) ?? .none
        guard try store.write(deletion(of: userID, revocation: revocation, record: record, requestedBy: .operator)) else { return nil }
        recordDeletion(of: userID, revocation)
        return revocation
    }

    /// The write that deletes the user (true when it did), queueing the Apple token, still encrypted, when Apple did
    /// not take it back now: the revocation queue retries it.
    private func deletion(of userID: Int64, revocation: RevocationResult, record: AppleTokenRecord?,
                          requestedBy: DeletionRequester) -> @Sendable (StoreRole) throws -> Bool {
        let queued = revocation == .queued ? record : nil
        let now = clock.now
        return { [webhooks] transaction in
            if let queued {
                _ = try transaction.enqueueRevocation(clientID: queued.clientID, encryptedToken: queued.encryptedRefreshToken,
                                                      tokenTypeHint: "refresh_token", now: now)
            }
            guard try transaction.deleteUser(id: userID) else { return false }
            try webhooks?.recordDeletion(memberID: userID, requestedBy: requestedBy, appleRevocation: revocation.rawValue,
                                         in: transaction, now: now)
            return true
        }
    }

    /// Counted and logged once the deletion committed.
    private func recordDeletion(of userID: Int64, _ revocation: RevocationResult) {
        metrics.increment("bridge_accounts_deleted_total", ["apple_revocation": revocation.rawValue])
        logger.info("account_deleted", ["user_id": String(userID), "apple_revocation": revocation.rawValue])
    }

    /// `.revoked` when Apple took the token back within the request's budget, else `.queued`.
    private func revokeAtApple(_ record: AppleTokenRecord) -> RevocationResult {
        let deadline = Date().addingTimeInterval(AppleServices.requestBudget)
        guard let appleTokens, let token = try? vault.open(record.encryptedRefreshToken, clientID: record.clientID),
              (try? appleTokens.revoke(token: token, clientID: record.clientID, deadline: deadline)) != nil else {
            return .queued
        }
        return .revoked
    }

    /// One pass of the revocation queue; returns how many revocations completed.
    package func processDueRevocations(limit: Int) -> Int {
        guard let appleTokens else { return 0 }
        let now = clock.now
        // Claimed for 5 minutes: no other instance sends these meanwhile; each is then completed or postponed.
        let claimedUntil = now.addingTimeInterval(300)
        guard let due = try? store.write({ try $0.claimDueRevocations(now: now, limit: limit, claimedUntil: claimedUntil) })
        else { return 0 }
        var done = 0
        for item in due where revoke(item, client: appleTokens, now: now) {
            done += 1
        }
        return done
    }

    private func revoke(_ item: PendingRevocation, client: AppleTokenClient, now: Date) -> Bool {
        let attempts = String(item.attempts + 1)
        do {
            let token = try vault.open(item.encryptedToken, clientID: item.clientID)
            try client.revoke(token: token, tokenTypeHint: item.tokenTypeHint, clientID: item.clientID)
            try store.write { try $0.completeRevocation(id: item.id) }
            metrics.increment("bridge_revocation_attempts_total", ["result": "completed"])
            logger.info("apple_revocation_completed", ["attempts": attempts])
            return true
        } catch let error as AppleTokenError where error.appleOAuthError == .invalidGrant {
            // Apple no longer knows the token (already revoked, or the user removed the app): nothing is left to do.
            _ = try? store.write { try $0.completeRevocation(id: item.id) }
            metrics.increment("bridge_revocation_attempts_total", ["result": "unneeded"])
            logger.info("apple_revocation_unneeded", ["attempts": attempts])
        } catch {
            // Backoff doubles from 30 s up to 6 h.
            let delay = min(30 * pow(2, Double(item.attempts)), 21_600)
            let reason = (error as? AppleTokenError)?.description ?? "the stored token could not be decrypted"
            _ = try? store.write { try $0.postponeRevocation(id: item.id, nextAttemptAt: now.addingTimeInterval(delay), error: reason) }
            metrics.increment("bridge_revocation_attempts_total", ["result": "failed"])
            logger.warning("apple_revocation_postponed", ["attempts": attempts, "retry_in_s": String(Int(delay)), "reason": reason])
        }
        return false
    }
}
