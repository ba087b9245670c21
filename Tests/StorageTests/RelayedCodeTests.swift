import Foundation
import Testing
@testable import Storage

extension StoreBehaviour {
    @Suite("Codes the Android relay handed over") struct RelayedCodes {
        @Test("a relayed code's redirect URI is found until it expires; the first record of a digest stays; housekeeping removes expired ones",
              arguments: Backend.allCases)
        func recordedUntilExpiry(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let relay = "https://login.example.com/apple/android/com.example.app"
                try store.write { tx in
                    try tx.recordRelayedCode(codeHash: "c1", redirectURI: relay, expiresAt: t0 + 600)
                    try tx.recordRelayedCode(codeHash: "c1", redirectURI: relay + ".other", expiresAt: t0 + 900)
                    try tx.recordRelayedCode(codeHash: "old", redirectURI: relay, expiresAt: t0 + 60)
                }
                #expect(try store.read { try $0.relayedCodeRedirectURI(codeHash: "c1", now: t0 + 599) } == relay)
                #expect(try store.read { try $0.relayedCodeRedirectURI(codeHash: "c1", now: t0 + 600) } == nil)
                #expect(try store.read { try $0.relayedCodeRedirectURI(codeHash: "unknown", now: t0) } == nil)
                #expect(try store.write { try $0.deleteExpired(now: t0 + 60) } == 1)
                #expect(try store.read { try $0.relayedCodeRedirectURI(codeHash: "old", now: t0) } == nil)
                #expect(try store.read { try $0.relayedCodeRedirectURI(codeHash: "c1", now: t0) } == relay)
            }
        }
    }
}
