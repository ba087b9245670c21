import Foundation
import JOSE
import JSON

/// Verifies the body Apple posts to the server-to-server notification endpoint: `{"payload": "<JWS>"}`,
/// RS256-signed with the same keys as identity tokens, its `events` claim a JSON string (or object).
public final class NotificationVerifier: Sendable {
    public static let maximumBodyLength = 65_536
    /// How old an event may be (Apple delivers promptly and retries for a limited time).
    public static let maximumAge: TimeInterval = 7 * 86_400

    private let keys: JWKSCache
    private let issuers: [String]
    private let clientIDs: [String]
    private let clock: WallClock
    private let leeway: TimeInterval

    public init(keys: JWKSCache, issuers: [String], clientIDs: [String], clock: WallClock = .system, leeway: TimeInterval = 60) {
        self.keys = keys
        self.issuers = issuers
        self.clientIDs = clientIDs
        self.clock = clock
        self.leeway = leeway
    }

    public func verify(_ body: [UInt8]) throws(NotificationRejection) -> AppleServerNotification {
        guard body.count <= Self.maximumBodyLength else { throw .malformed("the body is larger than \(Self.maximumBodyLength) bytes") }
        guard let document = try? JSONValue.parse(body), let payload = document["payload"]?.stringValue else {
            throw .malformed("the body is not a JSON object with a payload string")
        }
        let claims = try verifiedClaims(payload)

        let issuer = claims["iss"]?.stringValue ?? ""
        guard issuers.contains(where: { Self.sameIssuer(issuer, $0) }) else { throw .wrongIssuer(loggable(issuer)) }
        try checkAudience(claims["aud"])
        let now = clock.now.timeIntervalSince1970
        if let expiry = claims["exp"] {
            guard let expiry = expiry.doubleValue else { throw .malformed("exp is not a number") }
            guard now < expiry + leeway else { throw .expired }
        }
        // Apple's events may carry no exp; iat bounds their age instead, well inside the 30 days their jti is
        // remembered, so an old captured event cannot be replayed once its jti is forgotten.
        guard let issuedAt = claims["iat"]?.doubleValue else { throw .malformed("the notification has no iat") }
        guard issuedAt <= now + leeway else { throw .issuedInFuture }
        guard issuedAt >= now - Self.maximumAge else { throw .expired }

        let event = try events(claims["events"])
        let typeName = event["type"]?.stringValue ?? ""
        guard let type = AppleServerNotification.EventType(appleName: typeName) else {
            throw .unknownEventType(loggable(typeName))
        }
        guard let subject = event["sub"]?.stringValue, !subject.isEmpty else { throw .missingSubject }
        let jti = claims["jti"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } ?? SHA256.hexDigest(payload)
        return AppleServerNotification(
            type: type, subject: subject,
            email: event["email"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 },
            isPrivateEmail: Self.optionalBool(event["is_private_email"]),
            eventTime: Self.eventTime(event["event_time"]), jti: jti)
    }

    /// The claims of a JWS whose algorithm, key and signature checked out (the same checks as identity tokens).
    private func verifiedClaims(_ payload: String) throws(NotificationRejection) -> [String: JSONValue] {
        do {
            return try AppleSignedClaims.verify(payload, keys: keys, maxLength: CompactJWS.defaultMaxLength).objectValue ?? [:]
        } catch {
            switch error {
            case let .algorithmNotAllowed(alg): throw .algorithmNotAllowed(loggable(alg))
            case .missingKeyID: throw .missingKeyID
            case let .unknownKeyID(kid): throw .unknownKeyID(loggable(kid))
            case .keysUnavailable: throw .keysUnavailable
            case .badSignature: throw .badSignature
            case let .malformed(reason): throw .malformed(reason)
            default: throw .malformed(error.description)
            }
        }
    }

    private func checkAudience(_ value: JSONValue?) throws(NotificationRejection) {
        let audiences: [String] = switch value {
        case let .string(audience)?: [audience]
        case let .array(entries)?: entries.compactMap(\.stringValue)
        default: []
        }
        guard audiences.contains(where: { clientIDs.contains($0) }) else {
            throw .wrongAudience(loggable(audiences.joined(separator: ",")))
        }
    }

    /// Apple documents `events` as a JSON string holding an object; an object as such is accepted too.
    private func events(_ value: JSONValue?) throws(NotificationRejection) -> JSONValue {
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

    /// Apple's own example shows `iss` with a trailing slash.
    private static func sameIssuer(_ claimed: String, _ configured: String) -> Bool {
        claimed == configured || claimed == configured + "/"
    }

    /// Apple sends these flags as the strings "true"/"false" as well as JSON booleans.
    private static func optionalBool(_ value: JSONValue?) -> Bool? {
        switch value {
        case let .bool(flag)?: flag
        case let .string(text)?: text.lowercased() == "true" ? true : text.lowercased() == "false" ? false : nil
        default: nil
        }
    }

    /// Seconds in Apple's documentation; milliseconds have been seen too, so a value past year 5000 is read as ms.
    private static func eventTime(_ value: JSONValue?) -> Date? {
        let number: Double? = switch value {
        case let .number(number)?: number
        case let .string(text)?: Double(text)
        default: nil
        }
        guard let number, number.isFinite, number > 0 else { return nil }
        return Date(timeIntervalSince1970: number > 1e11 ? number / 1000 : number)
    }

    private func loggable(_ value: String) -> String {
        let printable = value.unicodeScalars.prefix(60).map { (0x20..<0x7F).contains($0.value) ? Character($0) : "?" }
        return String(printable) + (value.unicodeScalars.count > 60 ? "…" : "")
    }
}
