import AppleID
import Foundation
import JOSE
import Synchronization
import Testing
import TestSupport

extension AppleIDTests {
    @Suite("The ES256 client secret")
    struct ClientSecret {
        let key: AppleClientKey
        let clock = TestClock(frozenAt: Date(timeIntervalSince1970: 1_750_000_000))

        init() throws {
            key = AppleClientKey(teamID: "TEAM123456", keyID: "KEY1234567", privateKey: try ECPrivateKey.generate())
        }

        @Test("header and claims are exactly what Apple asks for, and the raw r‖s signature verifies")
        func shape() throws {
            let provider = ClientSecretProvider(key: key, clock: clock.clock)
            let jws = try CompactJWS(parsing: provider.secret(for: "com.example.web"))
            #expect(jws.header == ["alg": "ES256", "kid": "KEY1234567"])
            let now = 1_750_000_000
            #expect(try jws.claims() == [
                "iss": "TEAM123456", "sub": "com.example.web", "aud": "https://appleid.apple.com",
                "iat": .integer(now), "exp": .integer(now + 86_400),
            ])
            #expect(jws.signature.count == 64)
            #expect(key.publicKey.verifyES256(signature: jws.signature, message: jws.signingInput))
        }

        @Test("the lifetime is well under Apple's 15777000 s limit")
        func lifetime() throws {
            let provider = ClientSecretProvider(key: key, clock: clock.clock)
            let claims = try CompactJWS(parsing: provider.secret(for: "com.example.app")).claims()
            let lifetime = try #require(claims["exp"]?.int64Value) - (try #require(claims["iat"]?.int64Value))
            #expect(lifetime == 86_400)
            #expect(ClientSecretProvider.maximumLifetime < 15_777_000)
        }

        @Test("cached per client ID, re-signed once less than 10 % of the lifetime is left")
        func caching() throws {
            let provider = ClientSecretProvider(key: key, lifetime: 1000, clock: clock.clock)
            let web = try provider.secret(for: "com.example.web")
            let app = try provider.secret(for: "com.example.app")
            #expect(web != app)
            #expect(try CompactJWS(parsing: app).claims()["sub"] == "com.example.app")

            clock.advance(by: 899)
            #expect(try provider.secret(for: "com.example.web") == web)
            clock.advance(by: 2)
            let renewed = try provider.secret(for: "com.example.web")
            #expect(renewed != web)
            let claims = try CompactJWS(parsing: renewed).claims()
            #expect(claims["iat"] == .integer(1_750_000_901))
            #expect(claims["exp"] == .integer(1_750_001_901))
            #expect(try provider.secret(for: "com.example.web") == renewed)
        }

        @Test("a clock that went back before iat gets a new secret")
        func clockWentBack() throws {
            let provider = ClientSecretProvider(key: key, clock: clock.clock)
            let first = try provider.secret(for: "com.example.web")
            clock.advance(by: -3600)
            #expect(try provider.secret(for: "com.example.web") != first)
        }

        @Test("concurrent callers share one secret")
        func concurrent() throws {
            let provider = ClientSecretProvider(key: key, clock: clock.clock)
            let secrets = Mutex<Set<String>>([])
            DispatchQueue.concurrentPerform(iterations: 16) { _ in
                let secret = (try? provider.secret(for: "com.example.web")) ?? "failed"
                secrets.withLock { _ = $0.insert(secret) }
            }
            #expect(secrets.withLock { $0.count } == 1)
            #expect(!secrets.withLock { $0.contains("failed") })
        }
    }
}
