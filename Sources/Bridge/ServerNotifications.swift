import AppleID
import Foundation
import HTTPServer
import JOSE
import JSON
import Storage

/// `POST /apple/notifications`: Apple's server-to-server events, verified with Apple's keys and applied once.
extension BridgeApp {
    func appleNotification(_ request: Request) throws -> Response {
        let notification: AppleServerNotification
        do {
            notification = try notifications.verify(request.body)
        } catch {
            metrics.increment("bridge_notifications_total", ["result": "rejected"])
            logger.warning("notification_rejected", ["reason": error.description])
            // 503 when Apple's keys cannot be had, so Apple delivers again later; anything else is a bad event.
            let status = error == .keysUnavailable ? 503 : 400
            throw APIError(status, status == 503 ? "apple_keys_unavailable" : "invalid_notification",
                           APIError.sentence(error.description))
        }
        let now = clock.now
        let applied: String = try store.write { transaction in
            guard try transaction.recordNotification(jti: notification.jti, now: now) else { return "duplicate" }
            guard let user = try transaction.user(providerUserID: notification.subject) else { return "unknown_user" }
            switch notification.type {
            case .consentRevoked:
                try transaction.deleteSessions(userID: user.id)
                try transaction.deleteAppleToken(userID: user.id)
            case .accountDelete:
                try transaction.deleteUser(id: user.id)
            case .emailDisabled:
                try transaction.setEmailForwarding(userID: user.id, isPrivateEmailEnabled: false, now: now)
            case .emailEnabled:
                try transaction.setEmailForwarding(userID: user.id, isPrivateEmailEnabled: true, now: now)
            }
            return "applied"
        }
        metrics.increment("bridge_notifications_total", ["result": applied])
        logger.info("notification", ["type": notification.type.rawValue, "result": applied])
        return .json(JSONValue.object(["status": .string(applied)]).serialized())
    }
}
