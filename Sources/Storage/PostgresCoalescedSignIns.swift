import Foundation

/// A group commit's batch of sign-ins sent as one statement per kind of write, over arrays, instead of one statement
/// per write per sign-in.
///
/// Most of what PostgreSQL spends on a sign-in's small statements is the statements themselves (a portal, the
/// executor's start and end, its expressions set up), not their rows: with pgbench, ten sign-ins as four statements
/// over arrays cost PostgreSQL 57–76 µs of CPU a sign-in, as forty statements 84–112 µs.
///
/// The batch's closures first run against a `Recorder`, which sends nothing. It takes down the statements a web
/// sign-in sends without waiting (its login attempt spent, its identity token recorded, its member found or inserted,
/// its session opened) and refuses any other call. A batch is coalesced when every closure made only those calls, in
/// that order, no two on the same row (attempt, token, member, session), and each session is for the member its own
/// closure looked up. Those statements touch no row twice, so running them kind by kind is running them closure by
/// closure. The members' rows then go to the closures' finishers as their own statements would have handed them
/// over; what a finisher sends (the update of a returning member) runs as usual.
///
/// Whatever does not go as it would for every sign-in (an attempt already spent, a token used before, a member
/// missing for its session, any failure) throws: the group commit rolls the batch back and runs each write alone,
/// which finds the refusal and gives it to its own caller.
struct PostgresCoalescedSignIns {
    private var attempts: [Recorder.Statement] = []
    private var tokens: [Recorder.Statement] = []
    private var members: [Recorder.Statement] = []
    private var sessions: [Recorder.Statement] = []
    /// Each member lookup's place in `members`, by its key (no two are alike): its rows go to its own decoder.
    private var memberIndex: [MemberKey: Int] = [:]
    /// Each kind's values as the arrays its statement binds, made once the batch qualified.
    private var bound: (attempts: [SQLValue], tokens: [SQLValue], members: [SQLValue], sessions: [SQLValue]) = ([], [], [], [])
    private let recorder: Recorder

    /// Runs each write's closure against a recorder; nil when the batch cannot be coalesced (then nothing was sent).
    init?(recording jobs: [QueuedWrite<any StoreTransaction>]) {
        let recorder = Recorder()
        // A member's finisher holds its `PendingMember`, whose settling holds the recorder: kept by the recorder, the
        // statements would keep every member of the batch alive.
        defer { recorder.forgetStatements() }
        let transaction = SQLTransaction(connection: recorder, updatedMembers: UpdatedMembers())
        for (index, job) in jobs.enumerated() {
            recorder.job = index
            do {
                try job.run(on: transaction)
            } catch {
                return nil
            }
            if recorder.refused { return nil }
        }
        self.recorder = recorder
        guard sort(recorder.statements, jobs: jobs.count) else { return nil }
    }

    /// Files each statement under its kind; false when the batch breaks a rule that makes kind-by-kind the same as
    /// closure-by-closure, or when a kind's statements do not share the one time they are bound to.
    private mutating func sort(_ statements: [Recorder.Statement], jobs: Int) -> Bool {
        var lastKind = [Recorder.Kind?](repeating: nil, count: jobs)
        var memberOfJob = [MemberKey?](repeating: nil, count: jobs)
        var states = Set<String>(), tokenHashes = Set<String>(), sessionIDs = Set<String>()
        for statement in statements {
            if let last = lastKind[statement.job], last > statement.kind { return false }
            lastKind[statement.job] = statement.kind
            switch statement.kind {
            case .attempt:
                guard case .text(let state) = statement.values[1], states.insert(state).inserted,
                      attempts.isEmpty || Self.sameTime(statement.values[0], attempts[0].values[0]) else { return false }
                attempts.append(statement)
            case .token:
                guard case .text(let hash) = statement.values[1], tokenHashes.insert(hash).inserted,
                      tokens.isEmpty || Self.sameTime(statement.values[3], tokens[0].values[3]) else { return false }
                tokens.append(statement)
            case .member:
                guard memberOfJob[statement.job] == nil, let key = MemberKey(statement.values[0], statement.values[1]),
                      memberIndex.updateValue(members.count, forKey: key) == nil else { return false }
                memberOfJob[statement.job] = key
                members.append(statement)
            case .session:
                guard case .text(let id) = statement.values[0], sessionIDs.insert(id).inserted,
                      let key = MemberKey(statement.values[5], statement.values[6]), memberOfJob[statement.job] == key
                else { return false }
                sessions.append(statement)
            }
        }
        guard let attemptArrays = Self.arrays(of: attempts, Self.attemptColumns),
              let tokenArrays = Self.arrays(of: tokens, Self.tokenColumns),
              let memberArrays = Self.arrays(of: members, Self.memberColumns),
              let sessionArrays = Self.arrays(of: sessions, Self.sessionColumns) else { return false }
        bound = (attemptArrays, tokenArrays, memberArrays, sessionArrays)
        return true
    }

    private static func sameTime(_ a: SQLValue, _ b: SQLValue) -> Bool {
        guard case .integer(let a) = a, case .integer(let b) = b else { return false }
        return a == b
    }

    /// Sends the statements kind by kind in one round trip, checks that each did for every sign-in what its own
    /// statement had to, and runs the members' finishers. Inside the transaction the caller opened and commits.
    func run(on session: PostgresSession) throws {
        // Each row a statement reads stands for one sign-in (the keys are unique in the batch and in the table), so a
        // statement that changed as many rows as it has sign-ins did for each what its own statement had to.
        if let first = attempts.first {
            try session.send(Self.spendAttempts, [first.values[0]] + bound.attempts,
                             requiring: ChangeRequirement(rows: attempts.count, refusal: NotAsAlone()))
        }
        if let first = tokens.first {
            try session.send(Self.recordTokenUses, bound.tokens + [first.values[3]],
                             requiring: ChangeRequirement(rows: tokens.count, refusal: NotAsAlone()))
        }
        if !members.isEmpty {
            try session.query(Self.findOrInsertMembers, bound.members, { row in
                let key = MemberKey(provider: try row.requiredText("provider"), subject: try row.requiredText("provider_user_id"))
                guard let index = memberIndex[key] else {
                    throw StoreError.database("a coalesced sign-in's member row matches no sign-in")
                }
                try members[index].take!(row)
            }, finishing: { _ in })
        }
        if !sessions.isEmpty {
            try session.send(Self.insertSessions, bound.sessions,
                             requiring: ChangeRequirement(rows: sessions.count, refusal: NotAsAlone()))
        }
        try session.settle()
        // In the order the closures sent their lookups, as their own finishers would have run; what they send now
        // goes out on the transaction's connection, and nothing after the batch.
        recorder.forwarding = session
        defer { recorder.forwarding = nil }
        for member in members { try member.finish!() }
    }

    /// A coalesced statement did not do for some sign-in what its own would have; each runs alone instead.
    struct NotAsAlone: Error {}

    // MARK: - The statements over arrays

    /// The positions of a recorded statement's values that become arrays, and their element types; the others are the
    /// one time the statements of a kind share.
    private static let attemptColumns: [(Int, SQLArrayElement)] = [(1, .text)]
    private static let tokenColumns: [(Int, SQLArrayElement)] = [(0, .integer), (1, .text), (2, .integer)]
    private static let memberColumns: [(Int, SQLArrayElement)] = [
        (0, .text), (1, .text), (2, .text), (3, .bool), (4, .bool), (5, .text), (6, .integer), (7, .integer), (8, .bool),
    ]
    private static let sessionColumns: [(Int, SQLArrayElement)] = [
        (0, .text), (1, .text), (2, .bool), (3, .integer), (4, .integer), (5, .text), (6, .text),
    ]

    /// The recorded statements' values, one array for each of `columns`; nil if a value is not of its column's type.
    private static func arrays(of statements: [Recorder.Statement], _ columns: [(Int, SQLArrayElement)]) -> [SQLValue]? {
        var arrays = [[SQLValue]](repeating: [], count: columns.count)
        for statement in statements {
            for (column, (position, type)) in columns.enumerated() {
                guard position < statement.values.count else { return nil }
                let value = statement.values[position]
                switch (type, value) {
                case (.integer, .integer), (.text, .text), (.bool, .bool), (.text, .null): arrays[column].append(value)
                default: return nil
                }
            }
        }
        return zip(columns, arrays).map { SQLValue.array($0.1, $1) }
    }

    // The statements find every row by its unique key, one key at a time (a lateral subquery that cannot be merged
    // into a join, or `= ANY`): a join of the keys with the table was planned, on a new database, as a hash join over
    // the whole table, and a prepared statement kept that plan while the table grew.

    /// `SQLStatements.consumeLoginAttempt` for each state ($2), at one time ($1).
    static let spendAttempts = """
        UPDATE login_attempts SET consumed_at = $1
        WHERE state = ANY ($2::text[]) AND consumed_at IS NULL AND expires_at > $1
        """

    /// `SQLStatements.recordIdentityTokenUse` for each ($1 the token's expiry, $2 its digest, $3 the record's expiry),
    /// at one time ($4).
    static let recordTokenUses = """
        INSERT INTO identity_token_uses (token_expires_at, token_hash, expires_at)
        SELECT used.token_expires_at, used.token_hash, used.expires_at
        FROM unnest($1::int8[], $2::text[], $3::int8[]) AS used (token_expires_at, token_hash, expires_at)
        WHERE NOT EXISTS (
            SELECT 1 FROM used_identity_tokens
            WHERE used_identity_tokens.token_hash = used.token_hash AND used_identity_tokens.expires_at > $4)
        ON CONFLICT (token_expires_at, token_hash) DO UPDATE SET expires_at = excluded.expires_at
        WHERE identity_token_uses.expires_at <= $4
        """

    /// `SQLStatements.findOrInsertUser` for each member (its nine columns, in its order).
    static let findOrInsertMembers: String = {
        let columns = TableMapping.users.columnList
        let inserted = "provider, provider_user_id, email, is_private_email, email_verified, display_name, created_at, updated_at, email_forwarding_enabled"
        return """
            WITH wanted AS (
                SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bool[], $5::bool[], $6::text[], $7::int8[],
                                     $8::int8[], $9::bool[]) AS wanted (\(inserted))),
            found AS (
                SELECT locked.* FROM wanted, LATERAL (
                    \(TableMapping.users.selectFrom)
                    WHERE users.provider = wanted.provider AND users.provider_user_id = wanted.provider_user_id
                    OFFSET 0\(SQLDialect.postgres.lockingRowForUpdate)) AS locked),
            inserted AS (
                INSERT INTO users (\(inserted))
                SELECT \(inserted) FROM wanted WHERE NOT EXISTS (
                    SELECT 1 FROM found WHERE found.provider = wanted.provider AND found.provider_user_id = wanted.provider_user_id)
                ON CONFLICT (provider, provider_user_id) DO NOTHING
                RETURNING \(columns))
            SELECT \(columns), false AS created FROM found
            UNION ALL SELECT \(columns), true AS created FROM inserted
            """
    }()

    /// `SQLStatements.insertSessionOfAppleSubject` for each.
    static let insertSessions = """
        INSERT INTO sessions (id_hash, flow, nonce_verified, created_at, expires_at, user_id)
        SELECT opened.id_hash, opened.flow, opened.nonce_verified, opened.created_at, opened.expires_at, owner.id
        FROM unnest($1::text[], $2::text[], $3::bool[], $4::int8[], $5::int8[], $6::text[], $7::text[])
            AS opened (id_hash, flow, nonce_verified, created_at, expires_at, provider, provider_user_id),
        LATERAL (
            SELECT id FROM users WHERE users.provider = opened.provider AND users.provider_user_id = opened.provider_user_id
            OFFSET 0) AS owner
        """

    private struct MemberKey: Hashable {
        let provider: String
        let subject: String

        init(provider: String, subject: String) {
            self.provider = provider
            self.subject = subject
        }

        init?(_ provider: SQLValue, _ subject: SQLValue) {
            guard case .text(let provider) = provider, case .text(let subject) = subject else { return nil }
            self.init(provider: provider, subject: subject)
        }
    }

    // MARK: - Recording

    /// A connection that sends nothing: it takes down a sign-in's deferred statements and refuses everything else,
    /// until `forwarding` is set, from which point it hands every call to that session.
    final class Recorder: SQLConnection {
        enum Kind: Int, Comparable {
            case attempt, token, member, session

            static func < (a: Kind, b: Kind) -> Bool { a.rawValue < b.rawValue }
        }

        struct Statement {
            let kind: Kind
            let values: [SQLValue]
            let job: Int
            /// A member lookup's: decodes one of its rows for its finisher, and runs that finisher.
            var take: ((any StoredRow) throws -> Void)?
            var finish: (() throws -> Void)?
        }

        /// Why a closure's call was refused: the batch then runs closure by closure.
        struct NotRecordable: Error {}

        var dialect: SQLDialect { .postgres }
        /// The closure being recorded, by its place in the batch.
        var job = 0
        private(set) var statements: [Statement] = []
        /// A call was refused (a closure may have caught the error and gone on).
        private(set) var refused = false
        var forwarding: PostgresSession?

        func forgetStatements() {
            statements = []
        }

        private func refuse() -> NotRecordable {
            refused = true
            return NotRecordable()
        }

        func run(_ sql: String, _ values: [SQLValue]) throws -> Int {
            guard let forwarding else { throw refuse() }
            return try forwarding.run(sql, values)
        }

        func query<T>(_ sql: String, _ values: [SQLValue], _ decode: (any StoredRow) throws -> T) throws -> [T] {
            guard let forwarding else { throw refuse() }
            return try forwarding.query(sql, values, decode)
        }

        func insertReturningID(_ sql: String, _ values: [SQLValue]) throws -> Int64? {
            guard let forwarding else { throw refuse() }
            return try forwarding.insertReturningID(sql, values)
        }

        func settle() throws {
            guard let forwarding else { throw refuse() }
            try forwarding.settle()
        }

        func send(_ sql: String, _ values: [SQLValue], requiring: ChangeRequirement?) throws {
            if let forwarding { return try forwarding.send(sql, values, requiring: requiring) }
            guard requiring?.rows == 1 else { throw refuse() }
            let kind: Kind
            switch sql {
            case SQLStatements.consumeLoginAttempt where values.count == 2: kind = .attempt
            case SQLStatements.recordIdentityTokenUse where values.count == 4: kind = .token
            case SQLStatements.insertSessionOfAppleSubject where values.count == 7: kind = .session
            default: throw refuse()
            }
            statements.append(Statement(kind: kind, values: values, job: job))
        }

        func query<T>(_ sql: String, _ values: [SQLValue], _ decode: @escaping (any StoredRow) throws -> T,
                      finishing finish: @escaping ([T]) throws -> Void) throws {
            if let forwarding { return try forwarding.query(sql, values, decode, finishing: finish) }
            guard sql == Self.findOrInsertUser, values.count == 9 else { throw refuse() }
            let rows = Rows<T>()
            statements.append(Statement(kind: .member, values: values, job: job,
                                        take: { rows.decoded.append(try decode($0)) },
                                        finish: { try finish(rows.decoded) }))
        }

        private static let findOrInsertUser = SQLStatements.findOrInsertUser.text(for: .postgres)

        /// A member lookup's rows, decoded as they are read and kept for its finisher.
        private final class Rows<T> {
            var decoded: [T] = []
        }
    }
}
