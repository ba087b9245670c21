import AppleID
import BridgeMetrics
import Foundation
import HTTPServer
import JOSE
import JSON
import Logging
import SignIn
import Storage
import WebPresentation
import Webhooks

/// `POST /apple/notifications`: Apple's server-to-server events, verified with Apple's keys and applied once.
package struct AppleNotifications: Sendable {
    /// What became of a verified notification.
    package enum Result: String {
        case applied
        /// Its `jti` was seen before: Apple delivered it again.
        case duplicate
        /// It names a user this service does not have.
        case unknownUser = "unknown_user"
    }

    package let verifier: NotificationVerifier
    /// What it reads and writes of the store.
    package typealias StoreRole = any AppleServerSideTransaction & MemberTransaction & SessionTransaction & WebhookOutboxTransaction
    package let store: StoreAccess<StoreRole>
    package let clock: WallClock
    package let metrics: Metrics
    package let logger: Logger
    /// BRIDGE_WEBHOOK_*: each applied notification's event, written with it; nil writes none.
    package var webhooks: WebhookEvents? = nil

    package init(verifier: NotificationVerifier, store: StoreAccess<StoreRole>, clock: WallClock, metrics: Metrics, logger: Logger,
                 webhooks: WebhookEvents? = nil) {
        self.webhooks = webhooks
        self.verifier = verifier
        self.store = store
        self.clock = clock
        self.metrics = metrics
        self.logger = logger
    }

    /// Off the listener when a key must be fetched to verify it (verifying writes nothing); answered once the
    /// notification's write committed.
    package func receive(_ request: Request) throws -> Reply {
        guard verifier.verifiesWithoutFetching(request.body) else { return .offListener { [self] in try apply(request) } }
        return try apply(request)
    }

    private func apply(_ request: Request) throws -> Reply {
        let notification: AppleServerNotification
        do {
            notification = try verifier.verify(request.body)
        } catch {
            metrics.increment("bridge_notifications_total", ["result": "rejected"])
            logger.warning("notification_rejected", ["reason": error.description])
            throw APIError.notificationRejected(error)
        }
        let now = clock.now
        return request.answer(afterWriting: { [self] in try apply(notification, in: $0, now: now) }, to: store) {
            [metrics, logger] result in
            metrics.increment("bridge_notifications_total", ["result": result.rawValue])
            logger.info("notification", ["type": notification.type.rawValue, "result": result.rawValue])
            return .json(JSONValue.object(["status": .string(result.rawValue)]).serialized())
        }
    }

    private func apply(_ notification: AppleServerNotification,
                       in transaction: StoreRole,
                       now: Date) throws -> Result {
        guard try transaction.recordNotification(jti: notification.jti, now: now) else { return .duplicate }
        guard let user = try transaction.user(providerUserID: notification.subject) else { return .unknownUser }
        switch notification.type {
        case .consentRevoked:
            try transaction.deleteSessions(userID: user.id)
            try transaction.deleteAppleToken(userID: user.id)
            try webhooks?.record(.appleConsentRevoked, memberID: user.id, in: transaction, now: now)
        case .accountDelete:
            try transaction.deleteUser(id: user.id)
            // Apple removed the person's link to the app itself: there is nothing left to revoke.
            try webhooks?.recordDeletion(memberID: user.id, requestedBy: .apple, appleRevocation: "none", in: transaction, now: now)
        case .emailDisabled:
            try transaction.setEmailForwarding(userID: user.id, isPrivateEmailEnabled: false, now: now)
            try webhooks?.record(.appleEmailDisabled, memberID: user.id, in: transaction, now: now)
        case .emailEnabled:
            try transaction.setEmailForwarding(userID: user.id, isPrivateEmailEnabled: true, now: now)
            try webhooks?.record(.appleEmailEnabled, memberID: user.id, in: transaction, now: now)
        }
        return .applied
    }
}
