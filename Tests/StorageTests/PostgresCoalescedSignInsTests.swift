import Foundation
import Testing
@testable import Storage

extension PostgresStoreTests.GroupCommit {
    /// Sign-ins of one batch sent as one statement per kind of write (`PostgresCoalescedSignIns`).
    @Suite("Coalesced sign-ins") struct CoalescedSignIns {
        typealias Outcomes = Collected<(Int, Result<(user: User, created: Bool), any Error>)>

        struct Refused: Error, Equatable {
            let why: String
        }

        /// Queues a web sign-in's write as the sign-in service makes one: the login attempt spent, the identity token
        /// recorded, the member found or inserted, and a session naming the member by reference.
        static func queue(_ store: PostgresStore, _ index: Int, _ profile: AppleUserProfile, now: Date = t0,
                          _ answered: DispatchGroup, _ outcomes: Outcomes) {
            queue(store, index, profile, now: now, answered) { written in
                outcomes.append((index, Result { try written.get().get() }))
            }
        }

        /// The same, handing the write's outcome (the member, still pending until its commit) to `take`.
        static func queue(_ store: PostgresStore, _ index: Int, _ profile: AppleUserProfile, now: Date = t0,
                          _ answered: DispatchGroup, take: @escaping @Sendable (Result<PendingMember, any Error>) -> Void) {
            answered.enter()
            store.writeMayCoalesce({ tx in
                try tx.consumeLoginAttempt(state: "state-\(index)", now: now, otherwise: Refused(why: "attempt"))
                try tx.recordIdentityTokenUse(tokenHash: "token-\(index)", tokenExpiresAt: now + 600, expiresAt: now + 900,
                                              now: now, otherwise: Refused(why: "token"))
                let member = try tx.signInAppleUser(profile, now: now)
                try tx.insertSession(idHash: "session-\(index)", of: member.reference, flow: "web", nonceVerified: true,
                                     createdAt: now, expiresAt: now + 3600)
                return member
            }, completion: { written in
                take(written)
                answered.leave()
            })
        }

        static func storeAttempts(_ count: Int, in store: PostgresStore) throws {
            try store.write { tx in
                for index in 0..<count { try tx.insertLoginAttempt(loginAttempt("state-\(index)")) }
            }
        }

        static func sorted(_ outcomes: Outcomes) -> [(Int, Result<(user: User, created: Bool), any Error>)] {
            outcomes.all.sorted { $0.0 < $1.0 }
        }

        static func owner(ofSession index: Int, in store: PostgresStore) throws -> Int64? {
            try store.read { try $0.session(idHash: "session-\(index)", now: t0)?.user.id }
        }

        @Test("returning and new members signing in together go out as one statement per kind: each gets its own member, updated or created, and a session of its own")
        func returningAndNew() throws {
            try withFreshPostgresDatabase { url in
                let store = try migratedStore(url)
                try Self.storeAttempts(8, in: store)
                var returning: [User] = []
                for index in 0..<3 {
                    returning.append(try store.write {
                        try $0.upsertAppleUser(appleProfile(sub: "001.back\(index)", email: "old\(index)@example.com"), now: t0 - 60)
                    }.user)
                }
                let before = store.groupCommitCounts
                let outcomes = Outcomes()
                heldBatch(store, others: 8) { answered in
                    for index in 0..<8 {
                        let sub = index < 3 ? "001.back\(index)" : "001.new\(index)"
                        Self.queue(store, index, appleProfile(sub: sub, email: "new\(index)@example.com"), answered, outcomes)
                    }
                }
                let members = try Self.sorted(outcomes).map { try $0.1.get() }
                #expect(members.map(\.created) == [false, false, false, true, true, true, true, true])
                #expect(members.prefix(3).map(\.user.id) == returning.map(\.id))
                #expect(members.map(\.user.email) == (0..<8).map { "new\($0)@example.com" })
                #expect(Set(members.map(\.user.id)).count == 8)
                let after = store.groupCommitCounts
                #expect(after.coalescedCommits - before.coalescedCommits == 1)
                #expect(after.replays == before.replays)
                // What the database holds is what each sign-in alone would have left.
                for (index, member) in members.enumerated() {
                    let stored = try store.read { try $0.user(id: member.user.id) }
                    #expect(stored == member.user)
                    #expect(try Self.owner(ofSession: index, in: store) == member.user.id)
                    #expect(try store.read { try $0.loginAttempt(state: "state-\(index)")?.consumedAt } == t0)
                    #expect(try store.write {
                        try $0.recordIdentityTokenUse(tokenHash: "token-\(index)", tokenExpiresAt: t0 + 600, expiresAt: t0 + 900, now: t0)
                    } == false)
                }
                #expect(returning.allSatisfy { $0.updatedAt == t0 - 60 } && members.prefix(3).allSatisfy { $0.user.updatedAt == t0 })
            }
        }

        @Test("a sign-in whose attempt was spent, or whose token was used, gets its refusal as it would alone; nothing of it stays, and the others sign in",
              arguments: ["attempt", "token"])
        func refusedInABatch(why: String) throws {
            try withFreshPostgresDatabase { url in
                let store = try migratedStore(url)
                try Self.storeAttempts(4, in: store)
                if why == "attempt" {
                    #expect(try store.write { try $0.consumeLoginAttempt(state: "state-1", now: t0) })
                } else {
                    #expect(try store.write {
                        try $0.recordIdentityTokenUse(tokenHash: "token-1", tokenExpiresAt: t0 + 600, expiresAt: t0 + 900, now: t0)
                    })
                }
                let before = store.groupCommitCounts
                let outcomes = Outcomes()
                heldBatch(store, others: 4) { answered in
                    for index in 0..<4 { Self.queue(store, index, appleProfile(sub: "001.s\(index)"), answered, outcomes) }
                }
                let seen = Self.sorted(outcomes).map { index, outcome in
                    switch outcome {
                    case let .success(member): "\(index) \(member.created ? "created" : "found")"
                    case let .failure(error): "\(index) \((error as? Refused)?.why ?? "\(error)")"
                    }
                }
                #expect(seen == ["0 created", "1 \(why)", "2 created", "3 created"])
                #expect(store.groupCommitCounts.coalescedCommits == before.coalescedCommits)
                #expect(store.groupCommitCounts.replays - before.replays == 1)
                #expect(try Self.owner(ofSession: 1, in: store) == nil)
                #expect(try store.read { try $0.user(provider: "apple", providerUserID: "001.s1") } == nil)
                for index in [0, 2, 3] {
                    #expect(try Self.owner(ofSession: index, in: store) != nil)
                }
            }
        }

        @Test("sign-ins of one batch at different seconds, or with another write among them, all commit; those of one second together")
        func timesAndOtherWrites() throws {
            try withFreshPostgresDatabase { url in
                let store = try migratedStore(url)
                try Self.storeAttempts(4, in: store)
                var before = store.groupCommitCounts
                let outcomes = Outcomes()
                heldBatch(store, others: 2) { answered in
                    Self.queue(store, 0, appleProfile(sub: "001.t0"), now: t0, answered, outcomes)
                    Self.queue(store, 1, appleProfile(sub: "001.t1"), now: t0 + 1, answered, outcomes)
                }
                #expect(store.groupCommitCounts.coalescedCommits == before.coalescedCommits)
                before = store.groupCommitCounts
                let other = Collected<Bool>()
                heldBatch(store, others: 3) { answered in
                    Self.queue(store, 2, appleProfile(sub: "001.t2"), answered, outcomes)
                    answered.enter()
                    store.write(isolation: .readCommitted, { tx in try tx.insertLoginAttempt(loginAttempt("written-alongside")) },
                                completion: { other.append((try? $0.get()) != nil); answered.leave() })
                    Self.queue(store, 3, appleProfile(sub: "001.t3"), answered, outcomes)
                }
                #expect(store.groupCommitCounts.coalescedCommits - before.coalescedCommits == 1)
                #expect(other.all == [true])
                #expect(try store.read { try $0.loginAttempt(state: "written-alongside") } != nil)
                #expect(try Self.sorted(outcomes).map { try $0.1.get().created } == [true, true, true, true])
                for index in 0..<4 {
                    #expect(try Self.owner(ofSession: index, in: store) != nil)
                }
            }
        }

        /// Each member's finisher holds its `PendingMember`, which holds the recorder to settle with: the recorder
        /// kept the finishers, and every coalesced sign-in's member stayed in memory (227 MiB after 80,000 sign-ins).
        @Test("the members a coalesced batch made are freed once their callers have their outcomes")
        func nothingKept() throws {
            try withFreshPostgresDatabase { url in
                let store = try migratedStore(url)
                try Self.storeAttempts(4, in: store)
                let before = store.groupCommitCounts
                let members = Collected<Weak>()
                heldBatch(store, others: 4) { answered in
                    for index in 0..<4 {
                        Self.queue(store, index, appleProfile(sub: "001.kept\(index)"), answered) { written in
                            members.append(Weak(try? written.get()))
                        }
                    }
                }
                #expect(store.groupCommitCounts.coalescedCommits - before.coalescedCommits == 1)
                // A caller is answered from the lane, which lets go of the outcome just after: wait for that (a kept
                // member is never let go).
                let deadline = Date() + 5
                while members.all.contains(where: { $0.member != nil }), Date() < deadline { usleep(1_000) }
                #expect(members.all.count == 4 && members.all.allSatisfy { $0.member == nil })
            }
        }

        final class Weak: Sendable {
            nonisolated(unsafe) weak var member: PendingMember?

            init(_ member: PendingMember?) {
                self.member = member
            }
        }

        /// A prepared statement keeps its generic plan: one that joined the keys with a table was planned, on a new
        /// database, as a hash join over the whole table, and stayed so while the table grew (PostgreSQL then spent
        /// twice its CPU per sign-in in `scripts/bench signin`).
        @Test("on a new database, each coalesced statement's generic plan finds rows by their index, not by reading a table whole")
        func plansUseTheIndexes() throws {
            try withFreshPostgresDatabase { url in
                _ = try migratedStore(url)
                let connection = try PostgresConnection(conninfo: url.connectionString, defaults: [:])
                try connection.execute("SET plan_cache_mode = force_generic_plan")
                let statements = [
                    (AttemptSpend.table.batch, "1, ARRAY['s']"),
                    (TokenUse.table.batch, "ARRAY[1::int8], ARRAY['h'], ARRAY[2::int8], 1"),
                    (MemberSignIn.table.batch, """
                        ARRAY['apple'], ARRAY['x'], ARRAY[NULL::text], ARRAY[true], ARRAY[true], ARRAY[NULL::text],
                        ARRAY[1::int8], ARRAY[1::int8], ARRAY[true]
                        """),
                    (SessionOpening.table.batch,
                     "ARRAY['q'], ARRAY['web'], ARRAY[true], ARRAY[1::int8], ARRAY[1::int8], ARRAY['apple'], ARRAY['x']"),
                ]
                for (index, (sql, arguments)) in statements.enumerated() {
                    try connection.execute("PREPARE coalesced\(index) AS \(sql)")
                    let plan = try connection.query("EXPLAIN EXECUTE coalesced\(index)(\(arguments))") {
                        (try? $0.text("QUERY PLAN")) ?? nil
                    }.compactMap { $0 }.joined(separator: "\n")
                    for table in ["users", "login_attempts", "sessions", "identity_token_uses"] {
                        #expect(!plan.contains("Seq Scan on \(table)"), "\(plan)")
                    }
                    #expect(!plan.contains("Hash Join") && !plan.contains("Hash Semi Join"), "\(plan)")
                }
            }
        }
    }
}
