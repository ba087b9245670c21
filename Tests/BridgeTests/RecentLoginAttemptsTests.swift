@testable import Bridge
import Foundation
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
