import AppleID
import BridgeSettings
import Foundation
import JOSE
import JSON
import Locking
import OpenIDProvider
import Storage

/// The OpenID provider's RS256 keys, shared by every instance through the database: the newest signs, older ones
/// stay published for `retention` after a newer one took over (longer than any token they signed lives). Private
/// halves are stored sealed with AES-256-GCM under a key derived from BRIDGE_SECRET_KEY.
package final class ProviderKeyRing: Sendable {
    /// Longer than the longest-lived token a key signs (ID tokens, one hour).
    package static let retention: TimeInterval = 86_400
    /// How often an instance looks for a key another instance (or `keys rotate`) added.
    package static let reloadInterval: TimeInterval = 60

    package struct Snapshot {
        package var loadedAt: Date
        package var signing: SigningKey
        package var published: [String: RSAPublicKey]
        package var jwks: JSONValue

        package init(loadedAt: Date, signing: SigningKey, published: [String: RSAPublicKey], jwks: JSONValue) {
            self.loadedAt = loadedAt
            self.signing = signing
            self.published = published
            self.jwks = jwks
        }
    }

    /// What it reads and writes of the store.

    package typealias StoreRole = any OpenIDProviderTransaction

    package let store: StoreAccess<StoreRole>
    package let sealingKey: [UInt8]
    package let clock: WallClock
    private let snapshot: Lock<Snapshot?> = Lock(nil)

    /// Loads the keys, creating the first one when there is none.
    package init(store: StoreAccess<StoreRole>, sealingKey: [UInt8], clock: WallClock) throws {
        self.store = store
        self.sealingKey = sealingKey
        self.clock = clock
        let now = clock.now
        if try store.read({ try $0.providerSigningKeys() }).isEmpty {
            let record = try Self.newKey(sealingKey: sealingKey, now: now)
            try store.write { try $0.insertProviderSigningKey(record) }
        }
        let loaded: Snapshot
        do {
            loaded = try load(now: now)
        } catch let error as JOSEError {
            throw ConfigurationError("BRIDGE_SECRET_KEY", "cannot open the stored OpenID provider signing key (\(error)); "
                                     + "was BRIDGE_SECRET_KEY changed? See docs/openid-provider.md")
        }
        snapshot.withLock { $0 = loaded }
    }

    package var signingKey: SigningKey { current().signing }
    package var jwks: JSONValue { current().jwks }

    package func publicKey(_ keyID: String) -> RSAPublicKey? { current().published[keyID] }

    /// The keys as last loaded, reloaded once `reloadInterval` has passed (a failed reload keeps the old ones).
    private func current() -> Snapshot {
        let now = clock.now
        let cached = snapshot.withLock { $0 }!
        guard now.timeIntervalSince(cached.loadedAt) >= Self.reloadInterval else { return cached }
        let fresh = (try? load(now: now)) ?? Snapshot(loadedAt: now, signing: cached.signing, published: cached.published,
                                                      jwks: cached.jwks)
        snapshot.withLock { $0 = fresh }
        return fresh
    }

    private func load(now: Date) throws -> Snapshot {
        let records = try store.read { try $0.providerSigningKeys() }
        // The key not retired signs (two created within one second are told apart by that, not by time).
        guard let newest = records.last(where: { $0.retiredAt == nil }) ?? records.last else { throw JOSEError.invalidKey("no OpenID provider signing key is stored") }
        let pem = try AESGCM.open(newest.sealedPrivateKey, key: sealingKey, associatedData: Array(newest.keyID.utf8))
        let signing = SigningKey(keyID: newest.keyID, privateKey: try RSAPrivateKey(pem: String(decoding: pem, as: UTF8.self)))
        var published: [String: RSAPublicKey] = [:]
        var jwks: [JSONValue] = []
        for record in records where record.retiredAt.map({ now.timeIntervalSince($0) < Self.retention }) ?? true {
            guard let jwk = try? JSONValue.parse(Array(record.publicJWK.utf8)), let key = try? RSAPublicKey(jwk: jwk) else { continue }
            published[record.keyID] = key
            jwks.append(jwk)
        }
        return Snapshot(loadedAt: now, signing: signing, published: published, jwks: ["keys": .array(jwks)])
    }

    /// A fresh 2048-bit key, its kid the RFC 7638 thumbprint of its public half.
    package static func newKey(sealingKey: [UInt8], now: Date) throws -> ProviderSigningKeyRecord {
        let key = try RSAPrivateKey.generate(bits: 2048)
        let thumbprintInput: JSONValue = [
            "e": .string(Base64URL.encode(key.publicKey.exponent)), "kty": "RSA",
            "n": .string(Base64URL.encode(key.publicKey.modulus)),
        ]
        let keyID = Base64URL.encode(SHA256.hash(thumbprintInput.serializedBytes()))
        let sealed = try AESGCM.seal(Array(try key.pemString().utf8), key: sealingKey, associatedData: Array(keyID.utf8))
        return ProviderSigningKeyRecord(keyID: keyID, publicJWK: key.publicJWK(keyID: keyID).serialized(),
                                        sealedPrivateKey: sealed, createdAt: now)
    }

    /// Adds a key that signs from now on and retires the others (they stay published for `retention`).
    /// Returns the new kid. Running instances pick it up within `reloadInterval`.
    package static func rotate(store: any Store, sealingKey: [UInt8], now: Date) throws -> String {
        let record = try newKey(sealingKey: sealingKey, now: now)
        try store.write { transaction in
            try transaction.insertProviderSigningKey(record)
            try transaction.retireProviderSigningKeys(except: record.keyID, now: now)
        }
        return record.keyID
    }
}
