import Foundation
import JOSE
import JSON

/// Verifies the body Apple posts to the server-to-server notification endpoint: `{"payload": "<JWS>"}`,
/// RS256-signed with the same keys as identity tokens and held to the same `VerificationPolicy` (issuer,
/// audience, times), its `events` claim a JSON string (or object).
public final class NotificationVerifier: Sendable {
    public static let maximumBodyLength = 65_536

    public let policy: VerificationPolicy
    private let keys: any AppleKeySet
    /// The same keys when they may be fetched: asked whether a key would be.
    private let fetching: (any AppleKeyFetching)?
    private let clock: WallClock

    public init(policy: VerificationPolicy, keys: any AppleKeySet, clock: WallClock = .system) {
        self.policy = policy
        self.keys = keys
        self.fetching = keys as? any AppleKeyFetching
        self.clock = clock
    }

    /// The same policy built from a flat list of client IDs (which of them is the Services ID does not
    /// matter to notifications).
    public convenience init(keys: any AppleKeySet, issuers: [String], clientIDs: [String], clock: WallClock = .system,
                            leeway: TimeInterval = 60) {
        var policy = VerificationPolicy(issuers: issuers, servicesID: nil, bundleIDs: clientIDs)
        policy.leeway = leeway
        self.init(policy: policy, keys: keys, clock: clock)
    }

    public func verify(_ body: [UInt8]) throws(TokenRejection) -> AppleServerNotification {
        guard body.count <= Self.maximumBodyLength else {
            throw .malformed("the body is larger than \(Self.maximumBodyLength) bytes")
        }
        guard let document = try? JSONValue.parse(body), let payload = document["payload"]?.stringValue else {
            throw .malformed("the body is not a JSON object with a payload string")
        }
        let claims = try AppleSignedClaims.verify(payload, keys: keys, maxLength: CompactJWS.defaultMaxLength)
        try policy.checkIssuer(claims)
        _ = try policy.audience(of: claims)
        _ = try policy.checkTimes(claims, now: clock.now, maximumAge: policy.maximumNotificationAge, requireExpiry: false)

        let event = try Self.events(claims.events)
        let typeName = event["type"]?.stringValue ?? ""
        guard let type = AppleServerNotification.EventType(appleName: typeName) else {
            throw .unknownEventType(typeName.loggable)
        }
        guard let subject = AppleClaims.nonEmptyString(event["sub"]) else { throw .missingSubject }
        return AppleServerNotification(
            type: type, subject: subject, email: AppleClaims.nonEmptyString(event["email"]),
            isPrivateEmail: AppleClaims.flag(event["is_private_email"]),
            eventTime: NumericDate.lenient(event["event_time"]),
            jti: claims.jwtID ?? SHA256.hexDigest(payload))
    }

    /// Whether verifying `body` would need no call to Apple (its key is held, or it is refused before).
    public func verifiesWithoutFetching(_ body: [UInt8]) -> Bool {
        guard body.count <= Self.maximumBodyLength, let document = try? JSONValue.parse(body),
              let payload = document["payload"]?.stringValue else { return true }
        return AppleSignedClaims.answersWithoutFetching(payload, keys: fetching, maxLength: CompactJWS.defaultMaxLength)
    }

    /// Apple documents `events` as a JSON string holding an object; an object as such is accepted too.
    private static func events(_ value: JSONValue?) throws(TokenRejection) -> JSONValue {
        switch value {
        case let .string(text)?:
            guard let parsed = try? JSONValue.parse(text), case .object = parsed else {
                throw .malformed("the events claim is not a JSON object")
            }
            return parsed
        case let .object(members)?:
            return .object(members)
        default:
            throw .malformed("the notification has no events claim")
        }
    }
}
