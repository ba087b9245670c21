import Foundation
import Testing
@testable import Storage

extension PostgresStoreTests.GroupCommit {
    /// Queues a sign-in as the service writes one: the member found or inserted by a statement whose row is read by
    /// the commit, and a session naming the member by reference. Its outcome, once committed, is the member's row
    /// as that sign-in left it.
    static func queueSignIn(_ store: PostgresStore, _ index: Int, _ profile: AppleUserProfile, _ answered: DispatchGroup,
                            _ outcomes: Collected<(Int, Result<(user: User, created: Bool), any Error>)>,
                            mayCoalesce: Bool = false) {
        answered.enter()
        let body: @Sendable (any StoreTransaction) throws -> PendingMember = { tx in
            let member = try tx.signInAppleUser(profile, now: t0 + Double(index + 1))
            try tx.insertSession(idHash: "session-\(index)", of: member.reference, flow: "web", nonceVerified: true,
                                 createdAt: t0, expiresAt: t0 + 3600)
            return member
        }
        let completion: @Sendable (Result<PendingMember, any Error>) -> Void = { written in
            outcomes.append((index, Result { try written.get().get() }))
            answered.leave()
        }
        if mayCoalesce {
            store.writeMayCoalesce(body, completion: completion)
        } else {
            store.write(isolation: .readCommitted, body, completion: completion)
        }
    }

    /// Also as sign-ins the group commit may coalesce, which it does not do with two sign-ins of one member.
    @Test("two sign-ins of one member in one batch update it as if they ran in turn, each seeing the other's change",
          arguments: [false, true])
    func sameMemberTwiceInABatch(mayCoalesce: Bool) throws {
        try withFreshPostgresDatabase { url in
            let store = try Self.migratedStore(url)
            let existing = try store.write { try $0.upsertAppleUser(appleProfile(sub: "001.twice", email: "old@example.com"), now: t0) }.user
            let outcomes = Collected<(Int, Result<(user: User, created: Bool), any Error>)>()
            Self.heldBatch(store, others: 2) { answered in
                // The first brings a new address and the name; the second an older token, with the first address
                // and another name, which must not replace the one the first stored.
                Self.queueSignIn(store, 0, appleProfile(sub: "001.twice", email: "new@example.com", name: "Ada"), answered, outcomes,
                                 mayCoalesce: mayCoalesce)
                Self.queueSignIn(store, 1, appleProfile(sub: "001.twice", email: "old@example.com", name: "Bob"), answered, outcomes,
                                 mayCoalesce: mayCoalesce)
            }
            let seen = try outcomes.all.sorted { $0.0 < $1.0 }.map { index, outcome in
                let (user, created) = try outcome.get()
                return "\(index) \(user.id == existing.id && !created) \(user.email ?? "-") \(user.displayName ?? "-")"
            }
            #expect(seen == ["0 true new@example.com Ada", "1 true old@example.com Ada"])
            let stored = try store.read { try $0.user(id: existing.id) }
            #expect(stored?.email == "old@example.com" && stored?.displayName == "Ada" && stored?.updatedAt == t0 + 2)
            let owners = try store.read { tx in try (0..<2).map { try tx.session(idHash: "session-\($0)", now: t0)?.user.id } }
            #expect(owners == [existing.id, existing.id])
        }
    }

    @Test("a new member signing in twice in one batch is created by the first and found by the second, with a session each",
          arguments: [false, true])
    func newMemberTwiceInABatch(mayCoalesce: Bool) throws {
        try withFreshPostgresDatabase { url in
            let store = try Self.migratedStore(url)
            let outcomes = Collected<(Int, Result<(user: User, created: Bool), any Error>)>()
            Self.heldBatch(store, others: 3) { answered in
                Self.queueSignIn(store, 0, appleProfile(sub: "001.fresh", email: "a@example.com"), answered, outcomes,
                                 mayCoalesce: mayCoalesce)
                Self.queueSignIn(store, 1, appleProfile(sub: "001.other"), answered, outcomes, mayCoalesce: mayCoalesce)
                Self.queueSignIn(store, 2, appleProfile(sub: "001.fresh", name: "Ada"), answered, outcomes, mayCoalesce: mayCoalesce)
            }
            let members = try outcomes.all.sorted { $0.0 < $1.0 }.map { try $0.1.get() }
            #expect(members.map(\.created) == [true, true, false])
            #expect(members[2].user.id == members[0].user.id && members[1].user.id != members[0].user.id)
            #expect(members[2].user.email == "a@example.com" && members[2].user.displayName == "Ada")
            #expect(try postgresScalar("SELECT COUNT(*) AS value FROM users", in: url) == 2)
            let owners = try store.read { tx in try (0..<3).map { try tx.session(idHash: "session-\($0)", now: t0)?.user.id } }
            #expect(owners == members.map(\.user.id))
        }
    }

    @Test("a write that throws with a finisher still waiting is not taken for a refusal: nothing the finisher writes stays")
    func refusalWithAFinisherWaiting() throws {
        try withFreshPostgresDatabase { url in
            let store = try Self.migratedStore(url)
            let outcomes = Outcomes(), runs = Collected<Int>()
            Self.heldBatch(store, others: 2) { answered in
                Self.queue(store, 0, answered, outcomes, runs: runs) { tx in
                    let sql = try #require(tx as? SQLTransaction<PostgresSession>)
                    // A query that finds nothing, whose finisher would write at the commit.
                    try sql.connection.query("SELECT 1 AS one WHERE false", [], { try $0.integer("one") }) { _ in
                        try sql.insertLoginAttempt(loginAttempt("written-by-finisher"))
                    }
                    _ = try tx.consumeLoginAttempt(state: "nobody", now: t0)  // waits, and changes nothing
                    throw Abort()
                }
                Self.queue(store, 1, answered, outcomes, runs: runs) { tx in
                    try tx.insertLoginAttempt(loginAttempt("other"))
                    return "ok"
                }
            }
            #expect(Self.described(outcomes) == ["0 abort", "1 ok"])
            #expect(try postgresScalar("SELECT COUNT(*) AS value FROM login_attempts WHERE state = 'written-by-finisher'", in: url) == 0)
        }
    }
}
