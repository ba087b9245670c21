// The token front end: compact JWS parsing, the algorithm allow-list, key lookup and signature check, the
// claim rules of identity tokens, and the notification body, against one fixed RS256 key and a fixed clock.

import Foundation
import JOSE
import JSON
@testable import AppleID

/// The public half of the key the committed seed tokens were signed with (the private half was discarded).
/// Seeds signed with it get past the signature, so their claims reach the claim rules.
private let fixedKeyJWKS = #"{"keys":[{"kty":"RSA","kid":"fuzz-key","use":"sig","alg":"RS256","e":"AQAB","n":"\#(modulus)"}]}"#
private let modulus = "qkzAaMuyaaZDhM635lOHqA8hNvgCH_F-Qnf2NFQCZbeX9tvH9YozCDOX-pAbSchdhJx4tyAtyiUHJD3xyt7y38EgOiKKUVhqDh5rzk"
    + "SIIDy_n6v0kiOykH_-nVQBx5Mmf2gyQY_--jD5uLDZCQQRfuB4tuz04sSKFKqzphU8Y-QDHJ481o8DzWZIKFsFL27cqKcTIxIKDTNy5sP7qrdPIQX"
    + "y3F58N31YBOG0BMBrc7_rKiAzbflL3-wJNVjyFEfA5qJo2xGSdcV-AIBMZc4TyEURv1X3QV7MHgayWwsXKztf60Q77Q1eToHY2-h9TxwK3gHh_lRl"
    + "fpm6OVypw53Qqw"

/// 2026-05-28T20:26:40Z: the seeds' `iat`/`exp` are around this time, so they stay valid.
private let fixedClock = WallClock { Date(timeIntervalSince1970: 1_780_000_000) }

private struct FixedKeysTransport: AppleHTTPTransport {
    func get(_ url: String) throws(AppleHTTPError) -> HTTPExchange {
        HTTPExchange(status: 200, headers: ["Cache-Control": "max-age=86400"], body: Array(fixedKeyJWKS.utf8))
    }

    func postForm(_ url: String, fields: [(String, String)]) throws(AppleHTTPError) -> HTTPExchange {
        throw .unreachable("no network while fuzzing")
    }
}

private let keys: JWKSCache = {
    let cache = JWKSCache(url: "https://appleid.apple.com/auth/keys", transport: FixedKeysTransport(), clock: fixedClock)
    guard cache.prefetch() else { fatalError("the fixed key set did not load") }
    return cache
}()

private let identityTokens = IdentityTokenVerifier(
    policy: VerificationPolicy(issuers: ["https://appleid.apple.com"], servicesID: "com.example.web",
                               bundleIDs: ["com.example.app"]),
    keys: keys, clock: fixedClock)

private let notifications = NotificationVerifier(
    keys: keys, issuers: ["https://appleid.apple.com"], clientIDs: ["com.example.web", "com.example.app"],
    clock: fixedClock)

/// The first byte picks what the rest is (a token, a notification body, or a claims set) and which
/// sign-in context it is checked in; the rest is the input itself.
func fuzzJWS(_ input: UnsafeBufferPointer<UInt8>) {
    guard let selector = input.first else { return }
    let rest = UnsafeBufferPointer(rebasing: input.dropFirst())
    let context = VerificationContext(
        expectedNonce: selector & 0x10 == 0 ? "fuzz-nonce" : nil,
        authorizationCode: selector & 0x20 == 0 ? "fuzz-code" : nil,
        requireNonce: selector & 0x40 != 0, checkNonce: selector & 0x80 == 0)
    switch selector & 0x03 {
    case 0:
        _ = try? identityTokens.verify(String(decoding: rest, as: UTF8.self), context: context)
    case 1:
        _ = try? notifications.verify(Array(rest))
    case 2:
        guard case let .object(members)? = try? JSONValue.parse(rest), let claims = try? AppleClaims(members) else { return }
        _ = try? identityTokens.check(claims, context: context)
    default:
        checkCompactJWS(rest)
    }
}

/// Parsing alone, and base64url: whatever decodes re-encodes to the same text (one encoding per byte string).
private func checkCompactJWS(_ rest: UnsafeBufferPointer<UInt8>) {
    let text = String(decoding: rest, as: UTF8.self)
    if let jws = try? CompactJWS(parsing: text) {
        _ = try? jws.requireAlgorithm(in: [.RS256, .ES256])
        _ = try? jws.claims()
        guard jws.signingInput.count < rest.count else { fatalError("signing input longer than the token") }
    }
    if let decoded = Base64URL.decode(bytes: rest) {
        guard Base64URL.encode(decoded) == text else { fatalError("base64url accepted a non-canonical encoding") }
    }
}
