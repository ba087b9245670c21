import Foundation
import Testing
@testable import Storage

extension StoreBehaviour {
    @Suite("Identity token uses") struct IdentityTokenUses {
        @Test("the first use is recorded; a second one before expiry is a replay", arguments: Backend.allCases)
        func replayRefused(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                #expect(try store.write { try $0.recordIdentityTokenUse(tokenHash: "h", tokenExpiresAt: t0, expiresAt: t0 + 600, now: t0) })
                #expect(try !store.write { try $0.recordIdentityTokenUse(tokenHash: "h", tokenExpiresAt: t0, expiresAt: t0 + 600, now: t0 + 1) })
                #expect(try !store.write { try $0.recordIdentityTokenUse(tokenHash: "h", tokenExpiresAt: t0, expiresAt: t0 + 900, now: t0 + 599) })
                #expect(try store.write { try $0.recordIdentityTokenUse(tokenHash: "other", tokenExpiresAt: t0, expiresAt: t0 + 600, now: t0) })
            }
        }

        @Test("an expired record is replaced, and then guards again until its new expiry", arguments: Backend.allCases)
        func expiredReplaced(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                #expect(try store.write { try $0.recordIdentityTokenUse(tokenHash: "h", tokenExpiresAt: t0, expiresAt: t0 + 600, now: t0) })
                #expect(try store.write { try $0.recordIdentityTokenUse(tokenHash: "h", tokenExpiresAt: t0, expiresAt: t0 + 1200, now: t0 + 600) })
                #expect(try !store.write { try $0.recordIdentityTokenUse(tokenHash: "h", tokenExpiresAt: t0, expiresAt: t0 + 1800, now: t0 + 601) })
                #expect(try !store.write { try $0.recordIdentityTokenUse(tokenHash: "h", tokenExpiresAt: t0, expiresAt: t0 + 1800, now: t0 + 1199) })
                #expect(try store.write { try $0.recordIdentityTokenUse(tokenHash: "h", tokenExpiresAt: t0, expiresAt: t0 + 1800, now: t0 + 1200) })
            }
        }
    }
}
