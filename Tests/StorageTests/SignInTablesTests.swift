import Foundation
import Testing
@testable import Storage

/// The sign-in tables' statements, each declared once (`SignInTables.swift`): one sign-in's, a batch's over arrays
/// and the benchmark's are made from the same declaration.
@Suite("Sign-in tables") struct SignInTablesTests {
    /// A statement's rules on the values every sign-in of a batch shares (its time) and on its columns' NULLs, in
    /// the order they appear: the parts of a statement that decide whether it writes, with the row being written
    /// left out (a parameter in one form, a column of `unnest` in the other).
    static func rules(_ text: String, sharedParameters: [Int]) -> [String] {
        let shared = sharedParameters.map { "$\($0)" }
        let comparison = /([a-z_]+(?:\.[a-z_]+)?) (<=|>=|<>|<|>|=) (\$\d+)(?!\d|::)/
        let nullTest = /([a-z_]+(?:\.[a-z_]+)?) IS (NOT )?NULL/
        return text.matches(of: comparison).filter { shared.contains(String($0.output.3)) }.map { String($0.output.0) }
            + text.matches(of: nullTest).map { String($0.output.0) }
    }

    static func sharedParameters<Row>(_ table: SignInTable<Row>) -> [Int] {
        table.parameters.enumerated().filter { !$0.element.perSignIn }.map { $0.offset + 1 }
    }

    /// A rule that reads differently in a batch than in one sign-in's statement: what `expires_at > $1` changed to
    /// `>=` in only one of two hand-written texts was.
    static func differingRules<Row>(_ table: SignInTable<Row>) -> [String]? {
        let shared = sharedParameters(table)
        let single = rules(table.single(for: .postgres), sharedParameters: shared)
        let batch = rules(table.batch, sharedParameters: shared)
        return single == batch ? nil : single + ["but in a batch:"] + batch
    }

    @Test("each sign-in table's rules read the same in one sign-in's statement, in the batch's and on SQLite")
    func rulesAgree() {
        #expect(Self.differingRules(AttemptSpend.table) == nil)
        #expect(Self.differingRules(TokenUse.table) == nil)
        #expect(Self.differingRules(MemberSignIn.table) == nil)
        #expect(Self.differingRules(SessionOpening.table) == nil)
        // Each has rules to compare (the check above is not vacuous where a table has them).
        #expect(Self.rules(AttemptSpend.table.batch, sharedParameters: [1])
            == ["consumed_at = $1", "expires_at > $1", "consumed_at IS NULL"])
        #expect(Self.rules(TokenUse.table.batch, sharedParameters: [4])
            == ["used_identity_tokens.expires_at > $4", "identity_token_uses.expires_at <= $4"])
        // SQLite's differs only by the dialect's fragments, none of them in these rules.
        #expect(Self.rules(AttemptSpend.table.single(for: .sqlite), sharedParameters: [1])
            == Self.rules(AttemptSpend.table.single(for: .postgres), sharedParameters: [1]))
        #expect(Self.rules(TokenUse.table.single(for: .sqlite), sharedParameters: [4])
            == Self.rules(TokenUse.table.single(for: .postgres), sharedParameters: [4]))
    }

    /// The check above, given a declaration whose rule is written twice and changed in one form only, finds it: so
    /// it would find a second place where a rule is written.
    @Test("a rule changed in one form only is found")
    func divergenceIsFound() {
        let divergent = SignInTable<AttemptSpend>(
            name: "login_attempts", alias: "spent",
            parameters: [.shared("now", .integer) { .integer($0.now) }, .perSignIn("state", .text) { .text($0.state) }]
        ) { rows in """
            UPDATE login_attempts SET consumed_at = \(rows["now"])
            WHERE \(rows.keyMatches("state")) AND consumed_at IS NULL AND expires_at \(rows.form == .batch ? ">=" : ">") \(rows["now"])
            """
        }
        #expect(Self.differingRules(divergent) != nil)
    }

    @Test("the benchmark's statements are the store's, with pgbench's values in place of the bound ones")
    func benchmarkStatementsAreTheStores() {
        let spelled = SignInStatementTexts.postgres(.single) { table, parameter, _ in "<\(table).\(parameter)>" }
        #expect(spelled[0] == AttemptSpend.table.single(for: .postgres)
            .replacingOccurrences(of: "$1", with: "<login_attempts.now>")
            .replacingOccurrences(of: "$2", with: "<login_attempts.state>"))
        #expect(spelled.count == 4 && !spelled.contains { $0.contains("$") })
        let batch = SignInStatementTexts.postgres(.batch) { _, parameter, _ in parameter.uppercased() }
        #expect(batch[1].contains("WHERE used_identity_tokens.token_hash = used.token_hash AND used_identity_tokens.expires_at > NOW)"))
    }

    // MARK: - On PostgreSQL

    /// The sign-ins of the agreement test: six, against rows that make each rule decide both ways.
    struct Scenario {
        static let now: Int64 = 1_750_000_000
        static let count = 6

        /// Attempt 1 expires at `now` (spent by neither form), attempt 2 was spent before; token 3 was recorded and is
        /// still unexpired (refused), token 4 expires at `now` (replaced); member 0 exists (found, not inserted).
        static func prepare(_ session: PostgresSession) throws {
            for index in 0..<count {
                let expires = index == 1 ? now : now + 600
                try session.run("""
                    INSERT INTO login_attempts (state, nonce, binding_hash, created_at, expires_at, consumed_at)
                    VALUES ($1, 'n', 'b', $2, $3, $4)
                    """, [.text("state-\(index)"), .integer(now - 10), .integer(expires), index == 2 ? .integer(now - 5) : .null])
            }
            for (index, expires) in [(3, now + 60), (4, now)] {
                try session.run("INSERT INTO identity_token_uses (token_expires_at, token_hash, expires_at) VALUES ($1, $2, $3)",
                                [.integer(now + 600), .text("token-\(index)"), .integer(expires)])
            }
            try session.run("""
                INSERT INTO users (provider, provider_user_id, email, is_private_email, email_verified, display_name,
                                   created_at, updated_at, email_forwarding_enabled)
                VALUES ('apple', 'sub-0', 'old@example.com', false, true, NULL, $1, $1, true)
                """, [.integer(now - 100)])
        }

        static let attempts = (0..<count).map { AttemptSpend(state: "state-\($0)", now: now) }
        static let tokens = (0..<count).map {
            TokenUse(tokenExpiresAt: now + 600, tokenHash: "token-\($0)", expiresAt: now + 900, now: now)
        }
        static let members = (0..<count).map { index in
            MemberSignIn(user: User(id: 0, provider: "apple", providerUserID: "sub-\(index)",
                                    email: index == 5 ? nil : "member\(index)@example.com", isPrivateEmail: index % 2 == 0,
                                    emailVerified: true, displayName: index == 4 ? "Four" : nil,
                                    createdAt: Date(timeIntervalSince1970: Double(now)),
                                    updatedAt: Date(timeIntervalSince1970: Double(now)), emailForwardingEnabled: true))
        }
        /// Session 5 names a member nobody signs in: neither form opens it.
        static let sessions = (0..<count).map { index in
            SessionOpening(idHash: "session-\(index)", flow: "web", nonceVerified: index != 3, createdAt: now,
                           expiresAt: now + 3600, provider: "apple", subject: index == 5 ? "sub-nobody" : "sub-\(index)")
        }

        /// Every row of the four tables, ids left out (members by their `sub`).
        static func rows(_ session: PostgresSession) throws -> [String] {
            try [
                "SELECT concat_ws('|', state, expires_at, consumed_at) AS line FROM login_attempts ORDER BY state",
                "SELECT concat_ws('|', token_hash, token_expires_at, expires_at) AS line FROM identity_token_uses ORDER BY token_hash",
                """
                SELECT concat_ws('|', provider_user_id, email, is_private_email, email_verified, display_name, created_at,
                                 updated_at, email_forwarding_enabled) AS line FROM users ORDER BY provider_user_id
                """,
                """
                SELECT concat_ws('|', id_hash, flow, nonce_verified, sessions.created_at, expires_at, provider_user_id) AS line
                FROM sessions JOIN users ON users.id = sessions.user_id ORDER BY id_hash
                """,
            ].flatMap { sql in try session.query(sql) { try $0.requiredText("line") } }
        }
    }

    static func withScenario(_ body: (PostgresSession) throws -> Void) throws -> [String] {
        var rows: [String] = []
        try withFreshPostgresDatabase { url in
            let store = try PostgresStore(url: url, poolSize: 1)
            _ = try store.migrate()
            let session = PostgresSession(connection: try PostgresConnection(conninfo: url.connectionString, defaults: [:]),
                                          scrub: { $0 })
            try Scenario.prepare(session)
            try body(session)
            rows = try Scenario.rows(session)
        }
        return rows
    }

    @Test("the same sign-ins, written one by one and as one batch over arrays, change the same rows and leave the same rows on PostgreSQL")
    func singleAndBatchAgree() throws {
        var changedAlone: [Int] = [], foundAlone: [String] = []
        let alone = try Self.withScenario { session in
            func each<Row>(_ table: SignInTable<Row>, _ rows: [Row]) throws -> Int {
                try rows.reduce(0) { $0 + (try session.run(table.single(for: .postgres), try table.values($1))) }
            }
            changedAlone.append(try each(AttemptSpend.table, Scenario.attempts))
            changedAlone.append(try each(TokenUse.table, Scenario.tokens))
            for member in Scenario.members {
                foundAlone += try session.query(MemberSignIn.table.single(for: .postgres), try MemberSignIn.table.values(member)) {
                    let (user, created) = try MemberSignIn.decode($0)
                    return "\(user.providerUserID) \(created)"
                }
            }
            changedAlone.append(try each(SessionOpening.table, Scenario.sessions))
        }
        var changedTogether: [Int] = [], foundTogether: [String] = []
        let together = try Self.withScenario { session in
            func batch<Row>(_ table: SignInTable<Row>, _ rows: [Row]) throws -> Int {
                try session.run(table.batch, try #require(try table.batchValues(rows)))
            }
            changedTogether.append(try batch(AttemptSpend.table, Scenario.attempts))
            changedTogether.append(try batch(TokenUse.table, Scenario.tokens))
            foundTogether = try session.query(MemberSignIn.table.batch,
                                              try #require(try MemberSignIn.table.batchValues(Scenario.members))) {
                let (user, created) = try MemberSignIn.decode($0)
                return "\(user.providerUserID) \(created)"
            }.sorted()
            changedTogether.append(try batch(SessionOpening.table, Scenario.sessions))
        }
        // Attempts 1 (expired at now) and 2 (spent) refused; token 3 refused; sessions of the five members.
        #expect(changedAlone == [4, 5, 5])
        #expect(changedTogether == changedAlone)
        #expect(foundAlone == ["sub-0 false"] + (1..<Scenario.count).map { "sub-\($0) true" })
        #expect(foundTogether == foundAlone)
        #expect(!alone.isEmpty)
        #expect(together == alone)
    }
}
