import AppleID
import Foundation
import JOSE
import JSON
import Testing

extension AppleIDTests {
    /// Every claim rule of identity tokens, each with a row that passes and a row that does not.
    @Suite("Identity token claim rules (table, no sockets)")
    struct IdentityTokenRules {
        @Test("identity token rule", arguments: identityTokenRows)
        func rule(_ row: ClaimRow) {
            let outcome = row.verifyIdentityToken()
            #expect(outcome == row.expected, "\(row)")
        }

        @Test("a validly signed token with exp = 1e19 is refused, not accepted with a date no store can hold")
        func hugeExpiry() {
            let row = ClaimRow(rule: "exp", name: "1e19", set: ["exp": 1e19], expected: .refused(.invalidTime("exp")))
            let outcome = row.verifyIdentityToken()
            #expect(outcome == .refused(.invalidTime("exp")))
            #expect(TokenRejection.invalidTime("exp").code == "invalid_time_claim")
        }

        @Test("every rule has a passing row and a row with another outcome")
        func coverage() {
            let problems = rulesLackingRows(identityTokenRows)
            #expect(problems.isEmpty, "\(problems)")
        }
    }
}

/// Rules whose rows do not include an accepted outcome and at least one other outcome (a refusal, or for a
/// flag the other answer).
func rulesLackingRows(_ rows: [ClaimRow]) -> [String] {
    Dictionary(grouping: rows, by: \.rule).compactMap { rule, rows in
        let outcomes = rows.map(\.expected)
        let distinct = outcomes.reduce(into: [ClaimOutcome]()) { if !$0.contains($1) { $0.append($1) } }
        return outcomes.contains(where: \.isAccepted) && distinct.count >= 2 ? nil : rule
    }.sorted()
}

private typealias F = ClaimRuleFixture
private let nonce = "n-0123456789"
private let code = "c-0123456789"
private let expecting = VerificationContext(expectedNonce: nonce)
private func flags(email: Bool, relay: Bool) -> ClaimOutcome {
    .identity(nonceVerified: false, emailVerified: email, isPrivateEmail: relay)
}

let identityTokenRows: [ClaimRow] = [
    // Algorithm allow-list: RS256 only, decided before any key is looked up.
    ClaimRow(rule: "alg", name: "RS256", expected: .accepted),
    ClaimRow(rule: "alg", name: "none", signing: .algNone, expected: .refused(.algorithmNotAllowed("none"))),
    ClaimRow(rule: "alg", name: "HS256 keyed with Apple's public key", signing: .hs256WithPublicKey,
             expected: .refused(.algorithmNotAllowed("HS256"))),

    ClaimRow(rule: "kid", name: "a key in the set", expected: .accepted),
    ClaimRow(rule: "kid", name: "a kid the set does not hold", signing: .unknownKeyID, expected: .refused(.unknownKeyID("retired-key"))),
    ClaimRow(rule: "kid", name: "no kid", signing: .noKeyID, expected: .refused(.missingKeyID)),

    ClaimRow(rule: "signature", name: "Apple's key", expected: .accepted),
    ClaimRow(rule: "signature", name: "another key under Apple's kid", signing: .strangerUnderApplesKeyID,
             expected: .refused(.badSignature)),
    ClaimRow(rule: "signature", name: "claims changed after signing", signing: .tamperedPayload, expected: .refused(.badSignature)),

    ClaimRow(rule: "claims object", name: "a JSON object", expected: .accepted),
    ClaimRow(rule: "claims object", name: "an array", rawPayload: "[1]", expected: .refused(.malformed("the claims are not a JSON object"))),
    ClaimRow(rule: "claims object", name: "a number JSON cannot hold (1e400)", rawPayload: #"{"exp":1e400}"#,
             expected: .refused(.malformed("the claims are not a JSON object"))),

    // Issuer: exact match, so a trailing slash is another issuer.
    ClaimRow(rule: "iss", name: "exactly Apple's", expected: .accepted),
    ClaimRow(rule: "iss", name: "with a trailing slash", set: ["iss": .string(F.issuer + "/")],
             expected: .refused(.wrongIssuer(F.issuer + "/"))),
    ClaimRow(rule: "iss", name: "a look-alike", set: ["iss": "https://appleid.apple.com.evil.example"],
             expected: .refused(.wrongIssuer("https://appleid.apple.com.evil.example"))),
    ClaimRow(rule: "iss", name: "missing", removed: ["iss"], expected: .refused(.wrongIssuer(""))),

    // Audience: exactly one, and one of ours.
    ClaimRow(rule: "aud", name: "a bundle ID as a string", expected: .accepted),
    ClaimRow(rule: "aud", name: "another configured bundle ID", set: ["aud": .string(F.otherBundleID)], expected: .accepted),
    ClaimRow(rule: "aud", name: "an array of one of ours", set: ["aud": [.string(F.bundleID)]], expected: .accepted),
    ClaimRow(rule: "aud", name: "a foreign client ID", set: ["aud": "com.evil.app"], expected: .refused(.wrongAudience("com.evil.app"))),
    ClaimRow(rule: "aud", name: "a bundle ID with a K", set: ["aud": .string(F.kioskBundleID)], expected: .accepted),
    ClaimRow(rule: "aud", name: "ours only by canonical equivalence (KELVIN SIGN for K)", set: ["aud": "com.example.\u{212A}iosk"],
             expected: .refused(.wrongAudience("com.example.?iosk"))),
    ClaimRow(rule: "aud", name: "ours and a foreign entry", set: ["aud": [.string(F.bundleID), "com.evil.app"]],
             expected: .refused(.wrongAudience("com.example.app,com.evil.app"))),
    ClaimRow(rule: "aud", name: "two of ours", set: ["aud": [.string(F.bundleID), .string(F.otherBundleID)]],
             expected: .refused(.wrongAudience("com.example.app,com.example.watch"))),
    ClaimRow(rule: "aud", name: "an empty array", set: ["aud": []], expected: .refused(.wrongAudience(""))),
    ClaimRow(rule: "aud", name: "a number", set: ["aud": 42], expected: .refused(.wrongAudience(""))),
    ClaimRow(rule: "aud", name: "missing", removed: ["aud"], expected: .refused(.wrongAudience(""))),

    // Services ID tokens (web) always need the nonce; bundle-ID tokens (apps) may come without one.
    ClaimRow(rule: "services ID vs bundle ID", name: "bundle ID without a nonce", expected: .accepted),
    ClaimRow(rule: "services ID vs bundle ID", name: "services ID with the nonce",
             set: ["aud": .string(F.servicesID), "nonce": .string(nonce)], context: expecting, expected: .nonceVerified),
    ClaimRow(rule: "services ID vs bundle ID", name: "services ID without a nonce", set: ["aud": .string(F.servicesID)],
             context: expecting, expected: .refused(.missingNonce)),

    ClaimRow(rule: "exp", name: "in ten minutes", expected: .accepted),
    ClaimRow(rule: "exp", name: "30 s ago, inside the 60 s leeway", set: ["iat": F.at(-630), "exp": F.at(-30)], expected: .accepted),
    ClaimRow(rule: "exp", name: "61 s ago", set: ["iat": F.at(-661), "exp": F.at(-61)], expected: .refused(.expired)),
    ClaimRow(rule: "exp", name: "missing", removed: ["exp"], expected: .refused(.malformed("no exp claim"))),

    ClaimRow(rule: "iat in the future", name: "59 s ahead", set: ["iat": F.at(59), "exp": F.at(659)], expected: .accepted),
    ClaimRow(rule: "iat in the future", name: "61 s ahead", set: ["iat": F.at(61), "exp": F.at(661)],
             expected: .refused(.issuedInFuture)),

    ClaimRow(rule: "iat too old", name: "a day and 59 s ago", set: ["iat": F.at(-86_459), "exp": F.at(-59)], expected: .accepted),
    ClaimRow(rule: "iat too old", name: "a day and 61 s ago", set: ["iat": F.at(-86_461), "exp": F.at(-59)],
             expected: .refused(.issuedTooLongAgo)),
    ClaimRow(rule: "iat too old", name: "missing", removed: ["iat"], expected: .refused(.malformed("no iat claim"))),

    // exp - iat at most a day (Apple's tokens live ten minutes).
    ClaimRow(rule: "lifetime", name: "exactly a day", set: ["exp": F.at(86_390)], expected: .accepted),
    ClaimRow(rule: "lifetime", name: "a day and a second", set: ["exp": F.at(86_391)], expected: .refused(.lifetimeTooLong)),
    ClaimRow(rule: "lifetime", name: "exp in the year 2445", set: ["exp": 1.5e10], expected: .refused(.lifetimeTooLong)),

    // Every time claim is a number of seconds between 1970 and 9999, or the token is refused.
    ClaimRow(rule: "time claims", name: "a fractional exp", set: ["exp": F.at(590.5)], expected: .accepted),
    ClaimRow(rule: "time claims", name: "exp = 1e19", set: ["exp": 1e19], expected: .refused(.invalidTime("exp"))),
    ClaimRow(rule: "time claims", name: "exp = -1e19", set: ["exp": -1e19], expected: .refused(.invalidTime("exp"))),
    ClaimRow(rule: "time claims", name: "exp as a string", set: ["exp": "1800000590"], expected: .refused(.invalidTime("exp"))),
    ClaimRow(rule: "time claims", name: "iat = 1e19", set: ["iat": 1e19], expected: .refused(.invalidTime("iat"))),
    ClaimRow(rule: "time claims", name: "iat before 1970", set: ["iat": -1], expected: .refused(.invalidTime("iat"))),
    ClaimRow(rule: "time claims", name: "auth_time = 1e300", set: ["auth_time": 1e300], expected: .refused(.invalidTime("auth_time"))),

    ClaimRow(rule: "sub", name: "present", expected: .accepted),
    ClaimRow(rule: "sub", name: "missing", removed: ["sub"], expected: .refused(.missingSubject)),
    ClaimRow(rule: "sub", name: "empty", set: ["sub": ""], expected: .refused(.missingSubject)),
    ClaimRow(rule: "sub", name: "a number", set: ["sub": 42], expected: .refused(.missingSubject)),

    ClaimRow(rule: "nonce", name: "the raw nonce", set: ["nonce": .string(nonce)], context: expecting, expected: .nonceVerified),
    ClaimRow(rule: "nonce", name: "its SHA-256 hex", set: ["nonce": .string(SHA256.hexDigest(Array(nonce.utf8)))],
             context: expecting, expected: .nonceVerified),
    ClaimRow(rule: "nonce", name: "another nonce", set: ["nonce": "n-other"], context: expecting, expected: .refused(.nonceMismatch)),
    ClaimRow(rule: "nonce", name: "the SHA-256 hex of another nonce", set: ["nonce": .string(SHA256.hexDigest(Array("n-other".utf8)))],
             context: expecting, expected: .refused(.nonceMismatch)),
    ClaimRow(rule: "nonce", name: "missing when required", context: VerificationContext(expectedNonce: nonce, requireNonce: true),
             expected: .refused(.missingNonce)),
    ClaimRow(rule: "nonce", name: "empty when required", set: ["nonce": ""],
             context: VerificationContext(expectedNonce: nonce, requireNonce: true), expected: .refused(.missingNonce)),
    ClaimRow(rule: "nonce", name: "present but not requested: accepted, not marked verified", set: ["nonce": .string(nonce)],
             expected: .accepted),
    ClaimRow(rule: "nonce", name: "missing, not required (bundle ID)", context: expecting, expected: .accepted),
    ClaimRow(rule: "nonce", name: "not checked (token endpoint's id_token)", set: ["aud": .string(F.servicesID)],
             context: VerificationContext(checkNonce: false), expected: .accepted),

    ClaimRow(rule: "c_hash", name: "matches the code", set: ["c_hash": .string(halfHash(code))],
             context: VerificationContext(authorizationCode: code), expected: .accepted),
    ClaimRow(rule: "c_hash", name: "absent", context: VerificationContext(authorizationCode: code), expected: .accepted),
    ClaimRow(rule: "c_hash", name: "for another code", set: ["c_hash": .string(halfHash("c-other"))],
             context: VerificationContext(authorizationCode: code), expected: .refused(.codeHashMismatch)),

    ClaimRow(rule: "email_verified", name: "true", set: ["email": "a@example.com", "email_verified": true],
             expected: flags(email: true, relay: false)),
    ClaimRow(rule: "email_verified", name: "\"true\"", set: ["email": "a@example.com", "email_verified": "true"],
             expected: flags(email: true, relay: false)),
    ClaimRow(rule: "email_verified", name: "false", set: ["email": "a@example.com", "email_verified": false],
             expected: flags(email: false, relay: false)),
    ClaimRow(rule: "email_verified", name: "\"false\"", set: ["email": "a@example.com", "email_verified": "false"],
             expected: flags(email: false, relay: false)),
    ClaimRow(rule: "email_verified", name: "\"yes\" is no answer", set: ["email": "a@example.com", "email_verified": "yes"],
             expected: flags(email: false, relay: false)),

    ClaimRow(rule: "is_private_email", name: "true", set: ["is_private_email": true], expected: flags(email: false, relay: true)),
    ClaimRow(rule: "is_private_email", name: "\"TRUE\"", set: ["is_private_email": "TRUE"], expected: flags(email: false, relay: true)),
    ClaimRow(rule: "is_private_email", name: "\"false\"", set: ["is_private_email": "false"], expected: flags(email: false, relay: false)),
    ClaimRow(rule: "is_private_email", name: "absent", expected: flags(email: false, relay: false)),
]

/// OpenID Connect's c_hash for RS256: base64url of the left half of SHA-256.
private func halfHash(_ value: String) -> String {
    Base64URL.encode(SHA256.hash(Array(value.utf8)).prefix(16))
}
