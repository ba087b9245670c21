import Foundation
import Testing
@testable import Storage

/// The OpenID provider's rows, on every backend.
@Suite("OpenID provider rows, on every backend") struct OpenIDProviderStoreTests {
    func code(_ hash: String, userID: Int64, lifetime: TimeInterval = 60) -> AuthorizationCodeRecord {
        AuthorizationCodeRecord(codeHash: hash, clientID: "app", redirectURI: "com.example.app:/cb", codeChallenge: "c",
                                scope: "openid email", nonce: "n", userID: userID, authTime: t0, createdAt: t0,
                                expiresAt: t0 + lifetime)
    }

    @Test("a code is redeemed by exactly one of many racing callers; then it is a replay that names its family",
          arguments: Backend.allCases)
    func codeSingleUse(backend: Backend) throws {
        try withFreshStore(backend) { fixture in
            let store = fixture.store
            let userID = try store.write { try $0.upsertAppleUser(appleProfile(sub: "s"), now: t0).user.id }
            try store.write { tx in
                try tx.insertAuthorizationCode(code("race", userID: userID))
                try tx.insertAuthorizationCode(code("short", userID: userID, lifetime: 10))
            }
            let stores = [store, try fixture.openAnother()]
            let outcomes = Collected<String>()
            onThreads(8) { thread in
                let outcome = try? stores[thread % 2].write { try $0.redeemAuthorizationCode(codeHash: "race", now: t0 + 1) }
                if case .redeemed? = outcome { outcomes.append("won") } else { outcomes.append("lost") }
            }
            #expect(outcomes.all.sorted() == Array(repeating: "lost", count: 7) + ["won"])
            try store.write { try $0.setAuthorizationCodeFamily(codeHash: "race", familyID: "family-1") }
            let replay = try store.write { try $0.redeemAuthorizationCode(codeHash: "race", now: t0 + 2) }
            guard case let .replayed(record) = replay else { Issue.record("not a replay: \(replay)"); return }
            #expect(record.familyID == "family-1" && record.redeemedAt == t0 + 1 && record.nonce == "n")
            #expect(try store.write { try $0.redeemAuthorizationCode(codeHash: "short", now: t0 + 10) } == .expired)
            #expect(try store.write { try $0.redeemAuthorizationCode(codeHash: "none", now: t0) } == .unknown)
        }
    }

    @Test("signing keys: stored in order, older ones retired; authorizations go with their login attempt",
          arguments: Backend.allCases)
    func keysAndAuthorizations(backend: Backend) throws {
        try withFreshStore(backend) { fixture in
            let store = fixture.store
            let first = ProviderSigningKeyRecord(keyID: "k1", publicJWK: "{}", sealedPrivateKey: [1, 2, 3], createdAt: t0)
            let second = ProviderSigningKeyRecord(keyID: "k2", publicJWK: "{}", sealedPrivateKey: [4], createdAt: t0 + 5)
            try store.write { tx in
                try tx.insertProviderSigningKey(second)
                try tx.insertProviderSigningKey(first)
                #expect(try tx.retireProviderSigningKeys(except: "k2", now: t0 + 6) == 1)
            }
            var retired = first
            retired.retiredAt = t0 + 6
            #expect(try store.read { try $0.providerSigningKeys() } == [retired, second])

            let authorization = ProviderAuthorization(stateHash: "state-1", clientID: "app", redirectURI: "https://a/cb",
                                                      clientState: nil, nonce: "n", codeChallenge: nil, scope: "openid",
                                                      createdAt: t0, responseMode: "form_post")
            try store.write { tx in
                try tx.insertLoginAttempt(loginAttempt("state-1", lifetime: 60))
                try tx.insertProviderAuthorization(authorization)
            }
            #expect(try store.read { try $0.providerAuthorization(stateHash: "state-1") } == authorization)
            try store.write { _ = try $0.deleteExpired(now: t0 + 60) }
            #expect(try store.read { try $0.providerAuthorization(stateHash: "state-1") } == nil)
        }
    }

    @Test("the callback's one-statement read: the login attempt, with its authorization when it has one, and fresh",
          arguments: Backend.allCases)
    func attemptWithAuthorization(backend: Backend) throws {
        try withFreshStore(backend) { fixture in
            let store = fixture.store
            let authorization = ProviderAuthorization(stateHash: "oidc", clientID: "app", redirectURI: "https://a/cb",
                                                      clientState: "cs", nonce: "n", codeChallenge: "cc",
                                                      scope: "openid email", createdAt: t0 + 1)
            try store.write { tx in
                try tx.insertLoginAttempt(loginAttempt("plain", lifetime: 60))
                try tx.insertLoginAttempt(loginAttempt("oidc", lifetime: 60))
                try tx.insertProviderAuthorization(authorization)
            }
            let read = { (state: String) in try store.readOneStatement { try $0.loginAttemptWithAuthorization(state: state) } }
            let plain = try read("plain")
            #expect(plain?.attempt == loginAttempt("plain", lifetime: 60))
            #expect(plain != nil && plain?.authorization == nil)
            let oidc = try read("oidc")
            #expect(oidc?.attempt == loginAttempt("oidc", lifetime: 60))
            #expect(oidc?.authorization == authorization)
            #expect(try read("unknown") == nil)
            // Each call is a snapshot of its own: a write committed since shows at once.
            #expect(try store.write { try $0.consumeLoginAttempt(state: "plain", now: t0 + 5) })
            #expect(try read("plain")?.attempt.consumedAt == t0 + 5)
            #expect(try fixture.openAnother().readOneStatement { try $0.loginAttemptWithAuthorization(state: "plain") }?
                .attempt.consumedAt == t0 + 5)
        }
    }

    @Test("a grant names its client; a refresh token's family is found rotated or not", arguments: Backend.allCases)
    func grants(backend: Backend) throws {
        try withFreshStore(backend) { fixture in
            let store = fixture.store
            let userID = try store.write { tx in
                let user = try tx.upsertAppleUser(appleProfile(sub: "s"), now: t0).user
                try tx.insertSession(session("sess", userID: user.id))
                try tx.insertRefreshToken(RefreshToken(tokenHash: "r1", familyID: "fam", sessionIDHash: "sess", userID: user.id,
                                                       createdAt: t0, expiresAt: t0 + 3600))
                return user.id
            }
            let grant = ProviderGrant(familyID: "fam", clientID: "app", userID: userID, scope: "openid", authTime: t0, createdAt: t0)
            try store.write { try $0.insertProviderGrant(grant) }
            #expect(try store.read { try $0.providerGrant(familyID: "fam") } == grant)
            _ = try store.write { try $0.rotateRefreshToken(tokenHash: "r1", now: t0 + 1) }
            #expect(try store.read { try $0.refreshTokenFamily(tokenHash: "r1") } == "fam")
            #expect(try store.read { try $0.refreshTokenFamily(tokenHash: "nope") } == nil)
            try store.write { _ = try $0.deleteUser(id: userID) }
            #expect(try store.read { try $0.providerGrant(familyID: "fam") } == nil)
        }
    }
}
