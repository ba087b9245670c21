/// What the one SQL store (`SQLTransaction`) needs of a database connection: statements written with `$1 … $n`
/// placeholders, values bound out of band, rows read by column name, and failures as `StoreError`.
protocol SQLConnection {
    var dialect: SQLDialect { get }
    /// Runs a statement and returns how many rows it changed.
    @discardableResult
    func run(_ sql: String, _ values: [SQLValue]) throws -> Int
    /// Runs a statement and decodes every row it returned.
    func query<T>(_ sql: String, _ values: [SQLValue], _ decode: (any StoredRow) throws -> T) throws -> [T]
    /// Runs an `INSERT` that ends in `dialect.returningID`; the new row's id, or nil when it inserted nothing
    /// (`ON CONFLICT DO NOTHING`).
    func insertReturningID(_ sql: String, _ values: [SQLValue]) throws -> Int64?
    /// Runs a statement whose only outcome is success or failure, or, with `requiring`, the number of rows it
    /// changes. A connection may send it without waiting: its failure (or the requirement's refusal) is then
    /// thrown by a later statement or the commit, and fails the transaction all the same.
    func send(_ sql: String, _ values: [SQLValue], requiring: ChangeRequirement?) throws
    /// Runs a query whose rows the transaction needs only by its commit: `finish` gets them then at the latest, and
    /// at once on a connection that does not pipeline. Finishers run in the order their queries were sent, before
    /// the commit, and may run statements of their own; one that throws fails the transaction.
    func query<T>(_ sql: String, _ values: [SQLValue], _ decode: @escaping (any StoredRow) throws -> T,
                  finishing finish: @escaping ([T]) throws -> Void) throws
    /// Reads every result a finisher waits for, and runs those finishers, now.
    func settle() throws
    // A sign-in table's row, written as `send` writes: its table's statement for one sign-in (see `SignInTables.swift`),
    // unless the connection collects a batch's rows instead (`PostgresCoalescedSignIns.Recorder`).
    func send(_ spend: AttemptSpend, requiring: ChangeRequirement) throws
    func send(_ use: TokenUse, requiring: ChangeRequirement) throws
    func send(_ opening: SessionOpening, requiring: ChangeRequirement) throws
    /// The member found (its row locked) or inserted (`MemberSignIn`), as `query(_:_:_:finishing:)` runs it:
    /// `finish` gets its row as stored and whether it was inserted, or nil when neither happened.
    func findOrInsert(_ member: MemberSignIn, finishing finish: @escaping ((user: User, created: Bool)?) throws -> Void) throws
}

/// How many rows a statement must change, and what the caller throws when it changes another number.
struct ChangeRequirement {
    let rows: Int
    let refusal: any Error
}

extension SQLConnection {
    func query<T>(_ sql: String, _ values: [SQLValue], _ decode: @escaping (any StoredRow) throws -> T,
                  finishing finish: @escaping ([T]) throws -> Void) throws {
        try finish(try query(sql, values, decode))
    }

    func settle() throws {}

    // Each table named, so that its values are bound by code made for its type (specialized), as a hand-written
    // statement's are.
    func send(_ spend: AttemptSpend, requiring: ChangeRequirement) throws {
        try send(AttemptSpend.table.single(for: dialect), try AttemptSpend.table.values(spend), requiring: requiring)
    }

    func send(_ use: TokenUse, requiring: ChangeRequirement) throws {
        try send(TokenUse.table.single(for: dialect), try TokenUse.table.values(use), requiring: requiring)
    }

    func send(_ opening: SessionOpening, requiring: ChangeRequirement) throws {
        try send(SessionOpening.table.single(for: dialect), try SessionOpening.table.values(opening), requiring: requiring)
    }

    func findOrInsert(_ member: MemberSignIn, finishing finish: @escaping ((user: User, created: Bool)?) throws -> Void) throws {
        try query(MemberSignIn.table.single(for: dialect), try MemberSignIn.table.values(member), MemberSignIn.decode,
                  finishing: { try finish($0.first) })
    }

    func send(_ sql: String, _ values: [SQLValue], requiring: ChangeRequirement?) throws {
        let changed = try run(sql, values)
        if let requiring, changed != requiring.rows { throw requiring.refusal }
    }

    func send(_ sql: String, _ values: [SQLValue]) throws { try send(sql, values, requiring: nil) }

    @discardableResult
    func run(_ sql: String) throws -> Int { try run(sql, []) }

    func query<T>(_ sql: String, _ decode: (any StoredRow) throws -> T) throws -> [T] { try query(sql, [], decode) }
}
