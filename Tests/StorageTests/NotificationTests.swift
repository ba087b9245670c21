import Foundation
import Testing
@testable import Storage

extension StoreBehaviour {
    @Suite("Apple notifications") struct Notifications {
        @Test("a jti is new once, then recognized", arguments: Backend.allCases)
        func idempotent(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                #expect(try store.write { try $0.recordNotification(jti: "jti-1", now: t0) })
                #expect(try !store.write { try $0.recordNotification(jti: "jti-1", now: t0 + 5) })
                #expect(try store.write { try $0.recordNotification(jti: "jti-2", now: t0 + 5) })
            }
        }

        @Test("the user named by a notification's sub is found by provider and sub", arguments: Backend.allCases)
        func userBySub(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let user = try store.write { try $0.upsertAppleUser(appleProfile(sub: "001.abc"), now: t0).user }
                #expect(try store.read { try $0.user(providerUserID: "001.abc") } == user)
                #expect(try store.read { try $0.user(provider: "apple", providerUserID: "001.abc") } == user)
                #expect(try store.read { try $0.user(provider: "other", providerUserID: "001.abc") } == nil)
                #expect(try store.read { try $0.user(providerUserID: "unknown") } == nil)
            }
        }

        @Test("email-disabled then email-enabled: the flag follows, updatedAt only moves on change",
              arguments: Backend.allCases)
        func emailForwarding(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                let user = try store.write {
                    try $0.upsertAppleUser(appleProfile(sub: "s", email: "x@privaterelay.appleid.com", privateRelay: true), now: t0).user
                }
                #expect(user.emailForwardingEnabled)

                try store.write { try $0.setEmailForwarding(userID: user.id, isPrivateEmailEnabled: false, now: t0 + 60) }
                let disabled = try #require(try store.read { try $0.user(id: user.id) })
                #expect(!disabled.emailForwardingEnabled)
                #expect(disabled.updatedAt == t0 + 60)

                try store.write { try $0.setEmailForwarding(userID: user.id, isPrivateEmailEnabled: false, now: t0 + 90) }
                #expect(try store.read { try $0.user(id: user.id) } == disabled)

                try store.write { try $0.setEmailForwarding(userID: user.id, isPrivateEmailEnabled: true, now: t0 + 120) }
                let enabled = try #require(try store.read { try $0.user(id: user.id) })
                #expect(enabled.emailForwardingEnabled)
                #expect(enabled.updatedAt == t0 + 120)

                let signedInAgain = try store.write {
                    try $0.upsertAppleUser(appleProfile(sub: "s", email: "x@privaterelay.appleid.com", privateRelay: true), now: t0 + 180).user
                }
                #expect(signedInAgain == enabled)
            }
        }

        @Test("an unknown user is left alone", arguments: Backend.allCases)
        func unknownUser(backend: Backend) throws {
            try withFreshStore(backend) { fixture throws in
                let store = fixture.store
                try store.write { try $0.setEmailForwarding(userID: 999, isPrivateEmailEnabled: false, now: t0) }
                #expect(try store.read { try $0.countUsers() } == 0)
            }
        }
    }
}
