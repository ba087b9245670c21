@testable import Bridge
import Foundation
import SignIn
import Storage
import Testing

@Suite("Recent login attempts")
struct RecentLoginAttemptsTests {
    func attempt(_ state: String) -> LoginAttempt {
        LoginAttempt(state: state, nonce: "n-\(state)", bindingHash: "b-\(state)", createdAt: Date(timeIntervalSince1970: 0),
                     expiresAt: Date(timeIntervalSince1970: 600), consumedAt: nil)
    }

    @Test("a remembered attempt is found by its state digest, with its authorization, and once spent, as spent")
    func rememberAndForget() {
        let recent = RecentLoginAttempts(capacity: 4)
        let authorization = ProviderAuthorization(stateHash: "s1", clientID: "c", redirectURI: "https://rp.example/cb",
                                                  clientState: nil, nonce: nil, codeChallenge: nil, scope: "openid",
                                                  createdAt: Date(timeIntervalSince1970: 0))
        recent.remember(attempt("s1"), authorization: authorization)
        recent.remember(attempt("s2"))
        #expect(recent.entry(stateDigest: "s1") == RecentLoginAttempts.Entry(attempt: attempt("s1"), authorization: authorization))
        #expect(recent.entry(stateDigest: "s2")?.authorization == nil)
        #expect(recent.entry(stateDigest: "s3") == nil)
        recent.spend(stateDigest: "s1", at: Date(timeIntervalSince1970: 5))
        #expect(recent.entry(stateDigest: "s1")?.attempt.consumedAt == Date(timeIntervalSince1970: 5))
        #expect(recent.entry(stateDigest: "s1")?.authorization == authorization)
        #expect(recent.entry(stateDigest: "s2")?.attempt.consumedAt == nil)
        // One not remembered stays unknown: a spent mark is no attempt.
        recent.spend(stateDigest: "s3", at: Date(timeIntervalSince1970: 5))
        #expect(recent.entry(stateDigest: "s3") == nil)
    }

    @Test("attempts as the server makes them (hex digests, base64url nonces) come back exactly, and look-alikes stay apart")
    func compactValuesRoundTrip() {
        let recent = RecentLoginAttempts(capacity: 8)
        var made: [LoginAttempt] = []
        for _ in 0..<4 {
            let state = SecretTokens.digest(SecretTokens.random())
            made.append(LoginAttempt(state: state, nonce: SecretTokens.random(), bindingHash: SecretTokens.digest("b" + state),
                                     createdAt: Date(timeIntervalSince1970: 1_700_000_000.5),
                                     expiresAt: Date(timeIntervalSince1970: 1_700_000_600.25), consumedAt: nil))
            recent.remember(made[made.count - 1])
        }
        for attempt in made { #expect(recent.entry(stateDigest: attempt.state)?.attempt == attempt) }
        // Upper-case hex is another text, not the same digest; a 43-character text that is not base64url is kept.
        let first = made[0]
        #expect(recent.entry(stateDigest: first.state.uppercased()) == nil)
        let odd = LoginAttempt(state: first.state.uppercased(), nonce: String(repeating: "*", count: 43),
                               bindingHash: "AB" + String(first.bindingHash.dropFirst(2)), createdAt: first.createdAt,
                               expiresAt: first.expiresAt, consumedAt: nil)
        recent.remember(odd)
        #expect(recent.entry(stateDigest: odd.state)?.attempt == odd)
        #expect(recent.entry(stateDigest: first.state)?.attempt == first)
        recent.spend(stateDigest: odd.state, at: Date(timeIntervalSince1970: 5))
        #expect(recent.entry(stateDigest: first.state)?.attempt.consumedAt == nil)
    }

    @Test("an attempt remembered again keeps its newer slot when the older one is pushed out")
    func rememberedTwice() {
        let recent = RecentLoginAttempts(capacity: 3)
        recent.remember(attempt("s1"))
        recent.remember(attempt("s2"))
        recent.remember(attempt("s1"))
        recent.remember(attempt("s3"))  // overwrites the first slot, s1's older one
        #expect(recent.entry(stateDigest: "s1") != nil)
        #expect(recent.entry(stateDigest: "s2") != nil && recent.entry(stateDigest: "s3") != nil)
    }

    @Test("when full, the oldest is pushed out first and the newest are kept")
    func boundedRing() {
        let recent = RecentLoginAttempts(capacity: 3)
        for index in 1...5 { recent.remember(attempt("s\(index)")) }
        #expect((1...5).map { recent.entry(stateDigest: "s\($0)") != nil } == [false, false, true, true, true])
        // A spent one still takes its slot until newer ones push it out.
        recent.spend(stateDigest: "s3", at: Date(timeIntervalSince1970: 5))
        recent.remember(attempt("s6"))
        #expect((3...6).map { recent.entry(stateDigest: "s\($0)") != nil } == [false, true, true, true])
    }
}
