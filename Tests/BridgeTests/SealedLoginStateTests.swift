@testable import Bridge
import Foundation
import JOSE
import SignIn
import Storage
import Testing

@Suite("Sealed login states")
struct SealedLoginStateTests {
    let sealer = SealedLoginState(key: Array(repeating: 7, count: 32))
    let bindingHash = SecretTokens.digest("binding")
    let createdAt = Date(timeIntervalSince1970: 1_764_000_000)
    let nonce = SecretTokens.random()

    func sealed() throws -> String {
        try sealer.seal(nonce: nonce, bindingHash: bindingHash, createdAt: createdAt, expiresAt: createdAt + 600)
    }

    @Test("a state opens to its attempt as it would be stored: nonce, binding digest, whole-second times, unspent")
    func roundTrip() throws {
        let state = try sealed()
        let opened = try #require(sealer.open(state, stateDigest: SecretTokens.digest(state)))
        #expect(opened.kind == .web)
        #expect(opened.attempt == LoginAttempt(state: SecretTokens.digest(state), nonce: nonce, bindingHash: bindingHash,
                                       createdAt: createdAt, expiresAt: createdAt + 600, consumedAt: nil))
        // Whole seconds, as the database keeps them.
        let fractional = try sealer.seal(nonce: nonce, bindingHash: bindingHash, createdAt: createdAt + 0.75,
                                         expiresAt: createdAt + 600.75)
        #expect(sealer.open(fractional, stateDigest: "d")?.attempt.expiresAt == createdAt + 600)
    }

    @Test("an OpenID client's attempt opens as one, so its authorization is looked up rather than taken for a web sign-in")
    func providerKind() throws {
        let state = try sealer.seal(nonce: nonce, bindingHash: bindingHash, createdAt: createdAt, expiresAt: createdAt + 600,
                                    kind: .provider)
        let opened = try #require(sealer.open(state, stateDigest: "d"))
        #expect(opened.kind == .provider)
        #expect(opened.attempt.bindingHash == bindingHash)
    }

    @Test("a state is 119 characters: its SHA-256, the attempt's key, is two blocks")
    func length() throws {
        #expect(try sealed().utf8.count == 119)
    }

    @Test("states of attempts with different nonces differ, and are URL-safe")
    func unpredictable() throws {
        let other = try sealer.seal(nonce: SecretTokens.random(), bindingHash: bindingHash, createdAt: createdAt,
                                    expiresAt: createdAt + 600)
        let state = try sealed()
        #expect(state != other)
        #expect(state.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
    }

    @Test("a state altered anywhere, sealed under another key, or never sealed does not open")
    func refused() throws {
        let state = try sealed()
        var bytes = try #require(Base64URL.decode(state))
        for index in [0, 12, bytes.count / 2, bytes.count - 1] {
            bytes[index] ^= 1
            #expect(sealer.open(Base64URL.encode(bytes), stateDigest: "d") == nil, "byte \(index)")
            bytes[index] ^= 1
        }
        #expect(sealer.open(Base64URL.encode(bytes), stateDigest: "d") != nil)
        let otherKey = SealedLoginState(key: Array(repeating: 8, count: 32))
        #expect(otherKey.open(state, stateDigest: "d") == nil)
        for never in [SecretTokens.random(), "", "not base64!", String(repeating: "A", count: 4_000)] {
            #expect(sealer.open(never, stateDigest: "d") == nil)
        }
    }

    @Test("only a binding digest of 64 lowercase hex digits, and a nonce of 32 bytes in base64url, are sealed")
    func shapes() {
        for wrong in ["", "abc", String(repeating: "G", count: 64), bindingHash.uppercased(), bindingHash + "00"] {
            #expect(throws: StoreError.self) {
                try sealer.seal(nonce: nonce, bindingHash: wrong, createdAt: createdAt, expiresAt: createdAt + 600)
            }
        }
        for wrong in ["", "n", String(nonce.dropLast()), nonce + "A", String(nonce.dropLast()) + "B", nonce + "="] {
            #expect(throws: StoreError.self) {
                try sealer.seal(nonce: wrong, bindingHash: bindingHash, createdAt: createdAt, expiresAt: createdAt + 600)
            }
        }
    }
}
