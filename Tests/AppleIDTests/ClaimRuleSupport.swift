import AppleID
import Foundation
import JOSE
import JSON

/// Tokens signed at test time and checked against a `StaticKeySet`: the claim rules without sockets.
enum ClaimRuleFixture {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let issuer = "https://appleid.apple.com"
    static let servicesID = "com.example.web"
    static let bundleID = "com.example.app"
    static let otherBundleID = "com.example.watch"
    /// A bundle ID with a K, which KELVIN SIGN (U+212A) is canonically equal to.
    static let kioskBundleID = "com.example.Kiosk"
    static let keyID = "apple-1"
    static let apple = try! RSAPrivateKey.generate()
    static let stranger = try! RSAPrivateKey.generate()
    static let policy = VerificationPolicy(issuers: [issuer], servicesID: servicesID, bundleIDs: [bundleID, otherBundleID, kioskBundleID])
    static let keys = StaticKeySet([keyID: apple.publicKey])
    static let clock = WallClock { now }
    static let identityVerifier = IdentityTokenVerifier(policy: policy, keys: keys, clock: clock)
    static let notificationVerifier = NotificationVerifier(policy: policy, keys: keys, clock: clock)

    /// Seconds relative to `now`, as a NumericDate claim.
    static func at(_ offset: Double) -> JSONValue { .number(now.timeIntervalSince1970 + offset) }

    static let identityClaims: [String: JSONValue] = [
        "iss": .string(issuer), "aud": .string(bundleID), "sub": "001234.abcdef.1234",
        "iat": at(-10), "exp": at(590), "auth_time": at(-10), "nonce_supported": true,
    ]

    static let notificationClaims: [String: JSONValue] = [
        "iss": .string(issuer), "aud": .string(bundleID), "iat": at(-10), "jti": "jti-1",
        "events": #"{"type":"email-disabled","sub":"001234.abcdef.1234","event_time":1800000000}"#,
    ]

    /// How the token is signed, or how its signature is spoiled.
    enum Signing: Sendable {
        case apple
        case strangerUnderApplesKeyID
        case unknownKeyID
        case noKeyID
        case algNone
        /// HS256 keyed with Apple's public key: the classic key-confusion forgery.
        case hs256WithPublicKey
        case tamperedPayload
    }

    static func token(claims: [String: JSONValue], rawPayload: String?, signing: Signing) -> String {
        let payload = Array((rawPayload ?? JSONValue.object(claims).serialized()).utf8)
        var header: [String: JSONValue] = ["alg": "RS256", "kid": .string(keyID)]
        switch signing {
        case .unknownKeyID: header["kid"] = "retired-key"
        case .noKeyID: header["kid"] = nil
        case .algNone: header["alg"] = "none"
        case .hs256WithPublicKey: header["alg"] = "HS256"
        default: break
        }
        let input = Base64URL.encode(JSONValue.object(header).serializedBytes()) + "." + Base64URL.encode(payload)
        let message = Array(input.utf8)
        let signature: [UInt8] = switch signing {
        case .algNone: []
        case .hs256WithPublicKey: HMACSHA256.authenticate(key: Array(try! apple.publicKey.pemString().utf8), message: message)
        case .strangerUnderApplesKeyID: try! stranger.signRS256(message)
        default: try! apple.signRS256(message)
        }
        guard case .tamperedPayload = signing else { return input + "." + Base64URL.encode(signature) }
        var changed = claims
        changed["sub"] = "001999.someone.else"
        return Base64URL.encode(JSONValue.object(header).serializedBytes()) + "."
            + Base64URL.encode(JSONValue.object(changed).serializedBytes()) + "." + Base64URL.encode(signature)
    }
}

/// What a verifier made of a token, reduced to what the rules decide.
enum ClaimOutcome: Equatable, Sendable, CustomStringConvertible {
    case identity(nonceVerified: Bool, emailVerified: Bool, isPrivateEmail: Bool)
    case notification(isPrivateEmail: Bool?, eventTime: Date?)
    case refused(TokenRejection)

    static let accepted = ClaimOutcome.identity(nonceVerified: false, emailVerified: false, isPrivateEmail: false)
    static let nonceVerified = ClaimOutcome.identity(nonceVerified: true, emailVerified: false, isPrivateEmail: false)
    static let delivered = ClaimOutcome.notification(isPrivateEmail: nil, eventTime: Date(timeIntervalSince1970: 1_800_000_000))

    var isAccepted: Bool {
        if case .refused = self { return false }
        return true
    }

    var description: String {
        switch self {
        case let .identity(nonce, email, relay): "identity(nonceVerified: \(nonce), emailVerified: \(email), isPrivateEmail: \(relay))"
        case let .notification(relay, time): "notification(isPrivateEmail: \(String(describing: relay)), eventTime: \(String(describing: time)))"
        case let .refused(rejection): "refused(\(rejection.code): \(rejection.description))"
        }
    }
}

/// One row of a claim-rule table: start from valid claims, change some, sign, verify, compare the outcome.
struct ClaimRow: Sendable, CustomStringConvertible {
    var rule: String
    var name: String
    var set: [String: JSONValue] = [:]
    var removed: [String] = []
    var rawPayload: String?
    var signing: ClaimRuleFixture.Signing = .apple
    var context = VerificationContext()
    var expected: ClaimOutcome

    var description: String { "\(rule): \(name)" }

    func claims(from base: [String: JSONValue]) -> [String: JSONValue] {
        var claims = base.merging(set) { _, new in new }
        for name in removed { claims[name] = nil }
        return claims
    }

    func verifyIdentityToken() -> ClaimOutcome {
        let token = ClaimRuleFixture.token(claims: claims(from: ClaimRuleFixture.identityClaims), rawPayload: rawPayload,
                                           signing: signing)
        do {
            let identity = try ClaimRuleFixture.identityVerifier.verify(token, context: context)
            return .identity(nonceVerified: identity.nonceVerified, emailVerified: identity.emailVerified,
                             isPrivateEmail: identity.isPrivateEmail)
        } catch {
            return .refused(error)
        }
    }

    func verifyNotification() -> ClaimOutcome {
        let token = ClaimRuleFixture.token(claims: claims(from: ClaimRuleFixture.notificationClaims), rawPayload: rawPayload,
                                           signing: signing)
        let body = JSONValue.object(["payload": .string(token)]).serializedBytes()
        do {
            let notification = try ClaimRuleFixture.notificationVerifier.verify(body)
            return .notification(isPrivateEmail: notification.isPrivateEmail, eventTime: notification.eventTime)
        } catch {
            return .refused(error)
        }
    }
}
