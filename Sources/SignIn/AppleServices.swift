import AppleID
import BridgeMetrics
import Foundation

/// Everything that talks to Apple or checks what Apple signed, built from one configuration.
public struct AppleServices: Sendable {
    /// The longest one call to Apple is waited for.
    package static let callTimeout: TimeInterval = 5
    /// The longest a request waits on Apple in all (key fetch, code exchange with its retry, or revocation).
    package static let requestBudget: TimeInterval = 6
    /// The `Retry-After` of a 503 because Apple is slow or unreachable: about the breaker's cool-down.
    package static let retryAfterSeconds = 10

    /// Apple's published signing keys, cached.
    public let keys: JWKSCache
    /// Checks identity tokens.
    public let verifier: IdentityTokenVerifier
    /// Checks server-to-server notifications.
    public let notifications: NotificationVerifier
    /// Nil unless APPLE_TEAM_ID, APPLE_KEY_ID and APPLE_PRIVATE_KEY_PATH are set.
    public let clientSecrets: ClientSecretProvider?
    /// Exchanges codes and revokes grants; nil without client secrets.
    public let tokenClient: AppleTokenClient?
    /// The cap on calls to Apple in flight and the circuit breaker every call passes.
    public let callGuard: AppleCallGuard

    package init(keys: JWKSCache, verifier: IdentityTokenVerifier, notifications: NotificationVerifier,
                 clientSecrets: ClientSecretProvider?, tokenClient: AppleTokenClient?, callGuard: AppleCallGuard) {
        self.keys = keys
        self.verifier = verifier
        self.notifications = notifications
        self.clientSecrets = clientSecrets
        self.tokenClient = tokenClient
        self.callGuard = callGuard
    }
}

extension AppleServices {
    /// Counts a call to Apple in `bridge_apple_calls_total` and, when it was made, times it.
    package static func recordCall(into metrics: Metrics) -> GuardedTransport.Observer {
        { call in
            metrics.increment("bridge_apple_calls_total", ["endpoint": call.endpoint, "result": call.result.rawValue])
            if let seconds = call.seconds {
                metrics.observe("bridge_apple_call_duration_seconds", seconds, ["endpoint": call.endpoint])
            }
        }
    }
}
