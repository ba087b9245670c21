import Foundation
import JOSE
import JSON
import Locking

/// Signs the ES256 `client_secret` JWT that Apple's token and revoke endpoints require, one per client ID,
/// cached and re-signed once less than a tenth of its lifetime is left.
public final class ClientSecretProvider: Sendable {
    public static let audience = "https://appleid.apple.com"
    /// Apple refuses secrets valid longer than 15 777 000 s (six months); stay well below.
    public static let maximumLifetime: TimeInterval = 180 * 86_400

    public let key: AppleClientKey
    public let lifetime: TimeInterval
    private let clock: WallClock
    private let cache = Lock<[String: CachedSecret]>([:])

    private struct CachedSecret {
        let jwt: String
        let issuedAt: Int64
        let expiresAt: Int64
    }

    public init(key: AppleClientKey, lifetime: TimeInterval = 86_400, clock: WallClock = .system) {
        precondition(lifetime >= 60 && lifetime <= Self.maximumLifetime,
                     "client secret lifetime must be between 60 s and \(Int(Self.maximumLifetime)) s")
        self.key = key
        self.lifetime = lifetime
        self.clock = clock
    }

    /// The client secret for `clientID`: the Services ID for web codes, the bundle ID for native ones.
    public func secret(for clientID: String) throws(JOSEError) -> String {
        let now = NumericDate.seconds(clock.now)
        let renewBefore = Int64((lifetime * 0.1).rounded(.up))
        return try cache.withLock { cache throws(JOSEError) in
            // A clock that went back before `iat` would make Apple see a secret from the future.
            if let cached = cache[clientID], now < cached.expiresAt - renewBefore, now >= cached.issuedAt - 60 {
                return cached.jwt
            }
            let expiresAt = now + Int64(lifetime)
            let claims: JSONValue = [
                "iss": .string(key.teamID),
                "sub": .string(clientID),
                "aud": .string(Self.audience),
                "iat": .integer(now),
                "exp": .integer(expiresAt),
            ]
            let jwt = try JWSSigner.signES256(claims: claims, key: key.privateKey, keyID: key.keyID)
            cache[clientID] = CachedSecret(jwt: jwt, issuedAt: now, expiresAt: expiresAt)
            return jwt
        }
    }
}
