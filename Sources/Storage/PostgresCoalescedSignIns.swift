import Foundation

/// A group commit's batch of sign-ins sent as one statement per kind of write, over arrays, instead of one statement
/// per write per sign-in.
///
/// Most of what PostgreSQL spends on a sign-in's small statements is the statements themselves (a portal, the
/// executor's start and end, its expressions set up), not their rows: with pgbench, ten sign-ins as four statements
/// over arrays cost PostgreSQL 57–76 µs of CPU a sign-in, as forty statements 84–112 µs.
///
/// The batch's closures first run against a `Recorder`, which sends nothing. It takes down the rows a web sign-in
/// writes without waiting, as the typed values of their tables (`SignInTables.swift`: its login attempt spent, its
/// identity token recorded, its member found or inserted, its session opened), and refuses any other call. A batch is coalesced when every closure made only those calls, in
/// that order, no two on the same row (attempt, token, member, session), and each session is for the member its own
/// closure looked up. Those statements touch no row twice, so running them kind by kind is running them closure by
/// closure. The members' rows then go to the closures' finishers as their own statements would have handed them
/// over; what a finisher sends (the update of a returning member) runs as usual.
///
/// Whatever does not go as it would for every sign-in (an attempt already spent, a token used before, a member
/// missing for its session, any failure) throws: the group commit rolls the batch back and runs each write alone,
/// which finds the refusal and gives it to its own caller.
struct PostgresCoalescedSignIns {
    private var attempts: [AttemptSpend] = []
    private var tokens: [TokenUse] = []
    private var members: [Recorder.Member] = []
    private var sessions: [SessionOpening] = []
    /// Each member lookup's place in `members`, by its key (no two are alike): its row goes to its own finisher.
    private var memberIndex: [MemberKey: Int] = [:]
    /// Each kind's values as its batched statement binds them, made once the batch qualified.
    private var bound: (attempts: [SQLValue], tokens: [SQLValue], members: [SQLValue], sessions: [SQLValue]) = ([], [], [], [])
    private let recorder: Recorder

    /// Runs each write's closure against a recorder; nil when the batch cannot be coalesced (then nothing was sent).
    init?(recording jobs: [QueuedWrite<any StoreTransaction>]) {
        let recorder = Recorder()
        // A member's finisher holds its `PendingMember`, whose settling holds the recorder: kept by the recorder, the
        // rows would keep every member of the batch alive.
        defer { recorder.forgetRows() }
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
        guard (try? sort(recorder.rows, jobs: jobs.count)) == true else { return nil }
    }

    /// Files each row under its kind; false when the batch breaks a rule that makes kind-by-kind the same as
    /// closure-by-closure, or when a kind's rows do not share the one time they are bound to.
    private mutating func sort(_ rows: [Recorder.Recorded], jobs: Int) throws -> Bool {
        var lastKind = [Int?](repeating: nil, count: jobs)
        var memberOfJob = [MemberKey?](repeating: nil, count: jobs)
        var states = Set<String>(), tokenHashes = Set<String>(), sessionIDs = Set<String>()
        for recorded in rows {
            if let last = lastKind[recorded.job], last > recorded.row.order { return false }
            lastKind[recorded.job] = recorded.row.order
            switch recorded.row {
            case let .attempt(spend):
                guard states.insert(spend.state).inserted else { return false }
                attempts.append(spend)
            case let .token(use):
                guard tokenHashes.insert(use.tokenHash).inserted else { return false }
                tokens.append(use)
            case let .member(member):
                let key = MemberKey(provider: member.row.user.provider, subject: member.row.user.providerUserID)
                guard memberOfJob[recorded.job] == nil, memberIndex.updateValue(members.count, forKey: key) == nil else {
                    return false
                }
                memberOfJob[recorded.job] = key
                members.append(member)
            case let .session(opening):
                guard sessionIDs.insert(opening.idHash).inserted,
                      memberOfJob[recorded.job] == MemberKey(provider: opening.provider, subject: opening.subject)
                else { return false }
                sessions.append(opening)
            }
        }
        // The shared time of each kind: `batchValues` refuses rows that do not agree on it.
        guard let attemptValues = try Self.values(AttemptSpend.table, attempts),
              let tokenValues = try Self.values(TokenUse.table, tokens),
              let memberValues = try Self.values(MemberSignIn.table, members.map(\.row)),
              let sessionValues = try Self.values(SessionOpening.table, sessions) else { return false }
        bound = (attemptValues, tokenValues, memberValues, sessionValues)
        return true
    }

    /// A kind's bound values; none for a kind the batch does not write, nil when its rows cannot share a statement.
    private static func values<Row>(_ table: SignInTable<Row>, _ rows: [Row]) throws -> [SQLValue]? {
        rows.isEmpty ? [] : try table.batchValues(rows)
    }

    /// Sends the statements kind by kind in one round trip, checks that each did for every sign-in what its own
    /// statement had to, and runs the members' finishers. Inside the transaction the caller opened and commits.
    func run(on session: PostgresSession) throws {
        // Each row a statement reads stands for one sign-in (the keys are unique in the batch and in the table), so a
        // statement that changed as many rows as it has sign-ins did for each what its own statement had to.
        if !attempts.isEmpty {
            try session.send(AttemptSpend.table.batch, bound.attempts,
                             requiring: ChangeRequirement(rows: attempts.count, refusal: NotAsAlone()))
        }
        if !tokens.isEmpty {
            try session.send(TokenUse.table.batch, bound.tokens,
                             requiring: ChangeRequirement(rows: tokens.count, refusal: NotAsAlone()))
        }
        var found = [(user: User, created: Bool)?](repeating: nil, count: members.count)
        if !members.isEmpty {
            try session.query(MemberSignIn.table.batch, bound.members, { row in
                let member = try MemberSignIn.decode(row)
                guard let index = memberIndex[MemberKey(provider: member.user.provider, subject: member.user.providerUserID)]
                else { throw StoreError.database("a coalesced sign-in's member row matches no sign-in") }
                return (index, member)
            }, finishing: { rows in
                for (index, member) in rows { found[index] = member }
            })
        }
        if !sessions.isEmpty {
            try session.send(SessionOpening.table.batch, bound.sessions,
                             requiring: ChangeRequirement(rows: sessions.count, refusal: NotAsAlone()))
        }
        try session.settle()
        // In the order the closures sent their lookups, as their own finishers would have run; what they send now
        // goes out on the transaction's connection, and nothing after the batch.
        recorder.forwarding = session
        defer { recorder.forwarding = nil }
        for (member, row) in zip(members, found) { try member.finish(row) }
    }

    /// A coalesced statement did not do for some sign-in what its own would have; each runs alone instead.
    struct NotAsAlone: Error {}

    // The batched statements find every row by its unique key, one key at a time (a lateral subquery that cannot be
    // merged into a join, or `= ANY`): a join of the keys with the table was planned, on a new database, as a hash
    // join over the whole table, and a prepared statement kept that plan while the table grew (`SignInRows`).

    private struct MemberKey: Hashable {
        let provider: String
        let subject: String
    }

    // MARK: - Recording

    /// A connection that sends nothing: it takes down a sign-in's rows of the sign-in tables, as the typed values
    /// its transaction hands over, and refuses everything else, until `forwarding` is set, from which point it hands
    /// every call to that session.
    final class Recorder: SQLConnection {
        /// A member lookup, and the finisher its row goes to.
        struct Member {
            let row: MemberSignIn
            let finish: ((user: User, created: Bool)?) throws -> Void
        }

        /// One row, of one of the four tables, in the order a sign-in writes them.
        enum Row {
            case attempt(AttemptSpend)
            case token(TokenUse)
            case member(Member)
            case session(SessionOpening)

            var order: Int {
                switch self {
                case .attempt: 0
                case .token: 1
                case .member: 2
                case .session: 3
                }
            }
        }

        struct Recorded {
            let row: Row
            /// The closure that wrote it, by its place in the batch.
            let job: Int
        }

        /// Why a closure's call was refused: the batch then runs closure by closure.
        struct NotRecordable: Error {}

        var dialect: SQLDialect { .postgres }
        /// The closure being recorded, by its place in the batch.
        var job = 0
        private(set) var rows: [Recorded] = []
        /// A call was refused (a closure may have caught the error and gone on).
        private(set) var refused = false
        var forwarding: PostgresSession?

        func forgetRows() {
            rows = []
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
            guard let forwarding else { throw refuse() }
            try forwarding.send(sql, values, requiring: requiring)
        }

        func query<T>(_ sql: String, _ values: [SQLValue], _ decode: @escaping (any StoredRow) throws -> T,
                      finishing finish: @escaping ([T]) throws -> Void) throws {
            guard let forwarding else { throw refuse() }
            try forwarding.query(sql, values, decode, finishing: finish)
        }

        func send(_ spend: AttemptSpend, requiring: ChangeRequirement) throws {
            if let forwarding { return try forwarding.send(spend, requiring: requiring) }
            try record(.attempt(spend), requiring: requiring)
        }

        func send(_ use: TokenUse, requiring: ChangeRequirement) throws {
            if let forwarding { return try forwarding.send(use, requiring: requiring) }
            try record(.token(use), requiring: requiring)
        }

        func send(_ opening: SessionOpening, requiring: ChangeRequirement) throws {
            if let forwarding { return try forwarding.send(opening, requiring: requiring) }
            try record(.session(opening), requiring: requiring)
        }

        /// A row whose statement had to change one row: the batched statement checks that it changed one per row.
        private func record(_ row: Row, requiring: ChangeRequirement) throws {
            guard requiring.rows == 1 else { throw refuse() }
            rows.append(Recorded(row: row, job: job))
        }

        func findOrInsert(_ member: MemberSignIn, finishing finish: @escaping ((user: User, created: Bool)?) throws -> Void) throws {
            if let forwarding { return try forwarding.findOrInsert(member, finishing: finish) }
            rows.append(Recorded(row: .member(Member(row: member, finish: finish)), job: job))
        }
    }
}
