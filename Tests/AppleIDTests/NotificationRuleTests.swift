import AppleID
import Foundation
import JOSE
import JSON
import Testing

extension AppleIDTests {
    /// Every claim rule of server notifications, each with a row that passes and a row that does not. The
    /// signature, issuer, audience and time rows mirror the identity token table: one policy for both.
    @Suite("Notification claim rules (table, no sockets)")
    struct NotificationRules {
        @Test("notification rule", arguments: notificationRows)
        func rule(_ row: ClaimRow) {
            let outcome = row.verifyNotification()
            #expect(outcome == row.expected, "\(row)")
        }

        @Test("every rule has a passing row and a row with another outcome")
        func coverage() {
            let problems = rulesLackingRows(notificationRows)
            #expect(problems.isEmpty, "\(problems)")
        }
    }
}

private typealias F = ClaimRuleFixture
private let week: Double = 7 * 86_400

private func events(_ members: [String: JSONValue]) -> [String: JSONValue] {
    var event: [String: JSONValue] = ["type": "email-disabled", "sub": "001234.abcdef.1234", "event_time": 1_800_000_000]
    event.merge(members) { _, new in new }
    return ["events": .string(JSONValue.object(event).serialized())]
}

private func delivered(relay: Bool?, at time: Date? = F.now) -> ClaimOutcome {
    .notification(isPrivateEmail: relay, eventTime: time)
}

let notificationRows: [ClaimRow] = [
    ClaimRow(rule: "alg", name: "RS256", expected: .delivered),
    ClaimRow(rule: "alg", name: "none", signing: .algNone, expected: .refused(.algorithmNotAllowed("none"))),
    ClaimRow(rule: "alg", name: "HS256 keyed with Apple's public key", signing: .hs256WithPublicKey,
             expected: .refused(.algorithmNotAllowed("HS256"))),

    ClaimRow(rule: "kid", name: "a key in the set", expected: .delivered),
    ClaimRow(rule: "kid", name: "a kid the set does not hold", signing: .unknownKeyID, expected: .refused(.unknownKeyID("retired-key"))),
    ClaimRow(rule: "kid", name: "no kid", signing: .noKeyID, expected: .refused(.missingKeyID)),

    ClaimRow(rule: "signature", name: "Apple's key", expected: .delivered),
    ClaimRow(rule: "signature", name: "another key under Apple's kid", signing: .strangerUnderApplesKeyID,
             expected: .refused(.badSignature)),
    ClaimRow(rule: "signature", name: "claims changed after signing", signing: .tamperedPayload, expected: .refused(.badSignature)),

    ClaimRow(rule: "iss", name: "exactly Apple's", expected: .delivered),
    ClaimRow(rule: "iss", name: "with a trailing slash", set: ["iss": .string(F.issuer + "/")],
             expected: .refused(.wrongIssuer(F.issuer + "/"))),
    ClaimRow(rule: "iss", name: "missing", removed: ["iss"], expected: .refused(.wrongIssuer(""))),

    ClaimRow(rule: "aud", name: "a bundle ID as a string", expected: .delivered),
    ClaimRow(rule: "aud", name: "the services ID", set: ["aud": .string(F.servicesID)], expected: .delivered),
    ClaimRow(rule: "aud", name: "an array of one of ours", set: ["aud": [.string(F.bundleID)]], expected: .delivered),
    ClaimRow(rule: "aud", name: "a foreign client ID", set: ["aud": "com.evil.app"], expected: .refused(.wrongAudience("com.evil.app"))),
    ClaimRow(rule: "aud", name: "ours and a foreign entry", set: ["aud": [.string(F.bundleID), "com.evil.app"]],
             expected: .refused(.wrongAudience("com.example.app,com.evil.app"))),
    ClaimRow(rule: "aud", name: "missing", removed: ["aud"], expected: .refused(.wrongAudience(""))),

    ClaimRow(rule: "exp", name: "absent, as in Apple's example", expected: .delivered),
    ClaimRow(rule: "exp", name: "30 s ago, inside the leeway", set: ["iat": F.at(-630), "exp": F.at(-30)], expected: .delivered),
    ClaimRow(rule: "exp", name: "61 s ago", set: ["iat": F.at(-661), "exp": F.at(-61)], expected: .refused(.expired)),

    ClaimRow(rule: "iat", name: "59 s ahead", set: ["iat": F.at(59)], expected: .delivered),
    ClaimRow(rule: "iat", name: "61 s ahead", set: ["iat": F.at(61)], expected: .refused(.issuedInFuture)),
    ClaimRow(rule: "iat", name: "a week and 59 s ago", set: ["iat": F.at(-week - 59)], expected: .delivered),
    ClaimRow(rule: "iat", name: "a week and 61 s ago", set: ["iat": F.at(-week - 61)], expected: .refused(.issuedTooLongAgo)),
    ClaimRow(rule: "iat", name: "missing", removed: ["iat"], expected: .refused(.malformed("no iat claim"))),

    ClaimRow(rule: "lifetime", name: "exactly a day", set: ["exp": F.at(86_390)], expected: .delivered),
    ClaimRow(rule: "lifetime", name: "a day and a second", set: ["exp": F.at(86_391)], expected: .refused(.lifetimeTooLong)),

    ClaimRow(rule: "time claims", name: "integral seconds", expected: .delivered),
    ClaimRow(rule: "time claims", name: "exp = 1e19", set: ["exp": 1e19], expected: .refused(.invalidTime("exp"))),
    ClaimRow(rule: "time claims", name: "iat = -1e19", set: ["iat": -1e19], expected: .refused(.invalidTime("iat"))),
    ClaimRow(rule: "time claims", name: "iat as a string", set: ["iat": "1800000000"], expected: .refused(.invalidTime("iat"))),

    ClaimRow(rule: "events", name: "a JSON string", expected: .delivered),
    ClaimRow(rule: "events", name: "an object", set: ["events": ["type": "email-disabled", "sub": "001.abc", "event_time": 1_800_000_000]],
             expected: .delivered),
    ClaimRow(rule: "events", name: "missing", removed: ["events"], expected: .refused(.malformed("the notification has no events claim"))),
    ClaimRow(rule: "events", name: "a string that is not JSON", set: ["events": "{not json"],
             expected: .refused(.malformed("the events claim is not a JSON object"))),
    ClaimRow(rule: "events", name: "an unknown type", set: events(["type": "account-exploded"]),
             expected: .refused(.unknownEventType("account-exploded"))),
    ClaimRow(rule: "events", name: "sub null", set: events(["sub": nil]), expected: .refused(.missingSubject)),

    ClaimRow(rule: "is_private_email", name: "true", set: events(["is_private_email": true]), expected: delivered(relay: true)),
    ClaimRow(rule: "is_private_email", name: "\"true\"", set: events(["is_private_email": "true"]), expected: delivered(relay: true)),
    ClaimRow(rule: "is_private_email", name: "\"false\"", set: events(["is_private_email": "false"]), expected: delivered(relay: false)),
    ClaimRow(rule: "is_private_email", name: "\"maybe\" is no answer", set: events(["is_private_email": "maybe"]),
             expected: delivered(relay: nil)),

    ClaimRow(rule: "event_time", name: "seconds", expected: .delivered),
    ClaimRow(rule: "event_time", name: "milliseconds", set: events(["event_time": 1_800_000_000_000]), expected: .delivered),
    ClaimRow(rule: "event_time", name: "1e19 is no time", set: events(["event_time": 1e19]), expected: delivered(relay: nil, at: nil)),
    ClaimRow(rule: "event_time", name: "negative is no time", set: events(["event_time": -5]), expected: delivered(relay: nil, at: nil)),
]
