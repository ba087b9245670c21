import Foundation

// The sign-in's writes, declared once per table: which values a sign-in binds, how, and the statement's rules over
// them. From each declaration come the statement one sign-in sends (`SignInForm.single`, on SQLite and PostgreSQL
// through the dialect), the statement a batch of sign-ins sends over arrays on PostgreSQL (`SignInForm.batch`,
// `PostgresCoalescedSignIns`), and the benchmark's SQL (`signin-sql`, which prints them with pgbench's variables in
// place of the bound values). A rule written here holds in all of them.

/// A login attempt spent (`UPDATE … WHERE consumed_at IS NULL`): the web callback's proof.
struct AttemptSpend: Equatable {
    let state: String
    let now: Int64

    static let table = SignInTable<AttemptSpend>(
        name: "login_attempts", alias: "spent",
        parameters: [.shared("now", .integer) { .integer($0.now) }, .perSignIn("state", .text) { .text($0.state) }]
    ) { rows in """
        UPDATE login_attempts SET consumed_at = \(rows["now"])
        WHERE \(rows.keyMatches("state")) AND consumed_at IS NULL AND expires_at > \(rows["now"])
        """
    }
}

/// An identity token remembered against replay, until `expiresAt`; refused (no row changed) while an unexpired
/// record exists, in this table or the one from before migration 9 keyed by digest alone.
struct TokenUse: Equatable {
    let tokenExpiresAt: Int64
    let tokenHash: String
    let expiresAt: Int64
    let now: Int64

    static let table = SignInTable<TokenUse>(
        name: "identity_token_uses", alias: "used",
        parameters: [.perSignIn("token_expires_at", .integer) { .integer($0.tokenExpiresAt) },
                     .perSignIn("token_hash", .text) { .text($0.tokenHash) },
                     .perSignIn("expires_at", .integer) { .integer($0.expiresAt) },
                     .shared("now", .integer) { .integer($0.now) }]
    ) { rows in """
        INSERT INTO identity_token_uses (token_expires_at, token_hash, expires_at)
        \(rows.selecting(["token_expires_at", "token_hash", "expires_at"])) WHERE NOT EXISTS (
            SELECT 1 FROM used_identity_tokens
            WHERE used_identity_tokens.token_hash = \(rows["token_hash"]) AND used_identity_tokens.expires_at > \(rows["now"]))
        ON CONFLICT (token_expires_at, token_hash) DO UPDATE SET expires_at = excluded.expires_at
        WHERE identity_token_uses.expires_at <= \(rows["now"])
        """
    }
}

extension TokenUse {
    init(tokenHash: String, tokenExpiresAt: Date, expiresAt: Date, now: Date) throws {
        self.init(tokenExpiresAt: try StoredTime.unixSeconds(tokenExpiresAt), tokenHash: tokenHash,
                  expiresAt: try StoredTime.unixSeconds(expiresAt), now: try StoredTime.unixSeconds(now))
    }
}

/// A member found by its Apple `sub`, its row locked, or else inserted: one statement, for dialects that
/// `insertsInsideWITH`. Both parts see one snapshot: a member inserted by a transaction that commits after it is found
/// by neither, and the insert then waits for that commit and does nothing. Nothing is inserted, and no id drawn, when
/// the member exists. Its rows are the member's, with `created`.
struct MemberSignIn: Equatable {
    let user: User

    /// One of the statement's rows.
    static func decode(_ row: any StoredRow) throws -> (user: User, created: Bool) {
        (user: try TableMapping.users.decode(row), created: try row.bool("created"))
    }

    static let insertedColumns = ["provider", "provider_user_id", "email", "is_private_email", "email_verified",
                                  "display_name", "created_at", "updated_at", "email_forwarding_enabled"]

    static let table = SignInTable<MemberSignIn>(
        name: "users", alias: "wanted",
        parameters: [.perSignIn("provider", .text) { .text($0.user.provider) },
                     .perSignIn("provider_user_id", .text) { .text($0.user.providerUserID) },
                     .perSignIn("email", .text, nullable: true) { .optionalText($0.user.email) },
                     .perSignIn("is_private_email", .bool) { .bool($0.user.isPrivateEmail) },
                     .perSignIn("email_verified", .bool) { .bool($0.user.emailVerified) },
                     .perSignIn("display_name", .text, nullable: true) { .optionalText($0.user.displayName) },
                     .perSignIn("created_at", .integer) { try .date($0.user.createdAt) },
                     .perSignIn("updated_at", .integer) { try .date($0.user.updatedAt) },
                     .perSignIn("email_forwarding_enabled", .bool) { .bool($0.user.emailForwardingEnabled) }]
    ) { rows in
        let columns = TableMapping.users.columnList
        let inserted = insertedColumns.joined(separator: ", ")
        let sameMember = "users.provider = \(rows["provider"]) AND users.provider_user_id = \(rows["provider_user_id"])"
        return """
            WITH \(rows.namedRows)found AS (\(rows.eachRow(TableMapping.users.selectFrom + " WHERE " + sameMember,
                                                        locking: rows.dialect.lockingRowForUpdate))),
            inserted AS (
                INSERT INTO users (\(inserted))
                \(rows.selecting(insertedColumns, fromNamedRows: true)) WHERE NOT EXISTS (SELECT 1 FROM found\(rows.batched(
                    " WHERE found.provider = wanted.provider AND found.provider_user_id = wanted.provider_user_id")))
                ON CONFLICT (provider, provider_user_id) DO NOTHING
                RETURNING \(columns))
            SELECT \(columns), \(rows.dialect.flagLiteral(false)) AS created FROM found
            UNION ALL SELECT \(columns), \(rows.dialect.flagLiteral(true)) AS created FROM inserted
            """
    }
}

/// A session of the member a sign-in in the same transaction is finding or creating, which the statement finds by its
/// Apple `sub` (its id may not be known yet). It inserts nothing when there is no such member.
struct SessionOpening: Equatable {
    let idHash: String
    let flow: String
    let nonceVerified: Bool
    let createdAt: Int64
    let expiresAt: Int64
    let provider: String
    let subject: String

    static let table = SignInTable<SessionOpening>(
        name: "sessions", alias: "opened",
        parameters: [.perSignIn("id_hash", .text) { .text($0.idHash) }, .perSignIn("flow", .text) { .text($0.flow) },
                     .perSignIn("nonce_verified", .bool) { .bool($0.nonceVerified) },
                     .perSignIn("created_at", .integer) { .integer($0.createdAt) },
                     .perSignIn("expires_at", .integer) { .integer($0.expiresAt) },
                     .perSignIn("provider", .text) { .text($0.provider) },
                     .perSignIn("provider_user_id", .text) { .text($0.subject) }]
    ) { rows in
        let opened = ["id_hash", "flow", "nonce_verified", "created_at", "expires_at"]
        return """
            INSERT INTO sessions (\(opened.joined(separator: ", ")), user_id)
            \(rows.selecting(opened, then: "owner.id"))\(rows.joiningEachRow("""
                SELECT id FROM users
                WHERE users.provider = \(rows["provider"]) AND users.provider_user_id = \(rows["provider_user_id"])
                """, as: "owner"))
            """
    }
}

/// How a sign-in statement takes its values: one sign-in's, each bound to its own `$n`, or a batch's, each
/// per-sign-in parameter bound to one array (`$n::type[]`, made rows by `unnest`) and each shared one once.
package enum SignInForm: Sendable {
    case single
    case batch
}

/// One sign-in table's write: its parameters in `$n` order, and its statement written over `SignInRows`, so that
/// the one text makes every form.
struct SignInTable<Row>: Sendable {
    struct Parameter: Sendable {
        let name: String
        let type: SQLArrayElement
        /// Bound for each sign-in (an array in a batch); else one value every sign-in of a batch shares (its time).
        let perSignIn: Bool
        /// Text that may be NULL: cast where PostgreSQL cannot tell a bound NULL's type from the statement.
        let nullable: Bool
        let value: @Sendable (Row) throws -> SQLValue

        static func perSignIn(_ name: String, _ type: SQLArrayElement, nullable: Bool = false,
                              _ value: @escaping @Sendable (Row) throws -> SQLValue) -> Parameter {
            Parameter(name: name, type: type, perSignIn: true, nullable: nullable, value: value)
        }

        static func shared(_ name: String, _ type: SQLArrayElement,
                           _ value: @escaping @Sendable (Row) throws -> SQLValue) -> Parameter {
            Parameter(name: name, type: type, perSignIn: false, nullable: false, value: value)
        }
    }

    let name: String
    /// What a batch's rows are called in its statement.
    let alias: String
    let parameters: [Parameter]
    private let sqlite: String
    private let postgres: String
    /// PostgreSQL's batched form.
    let batch: String
    private let statement: @Sendable (SignInRows) -> String

    init(name: String, alias: String, parameters: [Parameter], statement: @escaping @Sendable (SignInRows) -> String) {
        self.name = name
        self.alias = alias
        self.parameters = parameters
        self.statement = statement
        let described = parameters.map { SignInRows.Described(name: $0.name, type: $0.type, perSignIn: $0.perSignIn,
                                                              nullable: $0.nullable) }
        sqlite = statement(SignInRows(form: .single, dialect: .sqlite, parameters: described, alias: alias))
        postgres = statement(SignInRows(form: .single, dialect: .postgres, parameters: described, alias: alias))
        batch = statement(SignInRows(form: .batch, dialect: .postgres, parameters: described, alias: alias))
    }

    /// The statement for one sign-in.
    func single(for dialect: SQLDialect) -> String {
        switch dialect {
        case .sqlite: sqlite
        case .postgres: postgres
        }
    }

    /// The text in `form` on `dialect`, made anew (the stored ones are made the same way).
    func text(_ form: SignInForm, for dialect: SQLDialect) -> String {
        statement(SignInRows(form: form, dialect: dialect, parameters: parameters.map {
            SignInRows.Described(name: $0.name, type: $0.type, perSignIn: $0.perSignIn, nullable: $0.nullable)
        }, alias: alias))
    }

    /// One sign-in's values, in `$n` order.
    func values(_ row: Row) throws -> [SQLValue] {
        try parameters.map { try $0.value(row) }
    }

    /// A batch's values: one array for each per-sign-in parameter, and the shared ones, which every row must agree
    /// on; nil when they do not (or a value is not of its parameter's type).
    func batchValues(_ rows: [Row]) throws -> [SQLValue]? {
        guard let first = rows.first else { return nil }
        var bound: [SQLValue] = []
        for parameter in parameters {
            if parameter.perSignIn {
                var elements: [SQLValue] = []
                elements.reserveCapacity(rows.count)
                for row in rows {
                    let value = try parameter.value(row)
                    switch (parameter.type, value) {
                    case (.integer, .integer), (.text, .text), (.bool, .bool): elements.append(value)
                    case (.text, .null) where parameter.nullable: elements.append(value)
                    default: return nil
                    }
                }
                bound.append(.array(parameter.type, elements))
            } else {
                let shared = try parameter.value(first)
                for row in rows.dropFirst() {
                    guard case .integer(let a) = shared, case .integer(let b) = try parameter.value(row), a == b else { return nil }
                }
                bound.append(shared)
            }
        }
        return bound
    }
}

/// What a sign-in statement's text says about the values it reads, in its form: `rows["name"]` is a value of the
/// sign-in being written (in a batch, of the row being written, `alias.name`, or the shared `$n`).
struct SignInRows {
    struct Described {
        let name: String
        let type: SQLArrayElement
        let perSignIn: Bool
        let nullable: Bool
    }

    let form: SignInForm
    let dialect: SQLDialect
    let parameters: [Described]
    /// The name a batch's rows go by in the statement.
    let alias: String

    private func number(_ name: String) -> Int {
        guard let index = parameters.firstIndex(where: { $0.name == name }) else {
            preconditionFailure("no parameter \(name) in a sign-in table")
        }
        return index + 1
    }

    private func described(_ name: String) -> Described { parameters[number(name) - 1] }

    subscript(_ name: String) -> String {
        guard form == .batch, described(name).perSignIn else { return "$\(number(name))" }
        return "\(alias).\(name)"
    }

    private func arrays(_ names: [String]) -> String {
        names.map { name in
            let type = switch described(name).type {
            case .integer: "int8"
            case .text: "text"
            case .bool: "bool"
            }
            return "$\(number(name))::\(type)[]"
        }.joined(separator: ", ")
    }

    /// A batch's rows: its per-sign-in arrays made rows by `unnest`, named `alias`.
    private var unnested: String {
        let names = parameters.filter(\.perSignIn).map(\.name)
        return "unnest(\(arrays(names))) AS \(alias) (\(names.joined(separator: ", ")))"
    }

    /// The rule for a table keyed by one per-sign-in value: `key = $n`, in a batch `key = ANY ($n::type[])`.
    func keyMatches(_ key: String) -> String {
        switch form {
        case .single: "\(key) = \(self[key])"
        case .batch: "\(key) = ANY (\(arrays([key])))"
        }
    }

    /// `SELECT` of the values `names` (then `extra`): one sign-in's parameters, or each of a batch's rows (from the
    /// arrays, or from the rows `namedRows` named in the statement's `WITH`).
    func selecting(_ names: [String], then extra: String? = nil, fromNamedRows: Bool = false) -> String {
        let values = names.map { name -> String in
            let parameter = described(name)
            return form == .single && parameter.nullable && parameter.type == .text ? "CAST(\(self[name]) AS TEXT)" : self[name]
        } + (extra.map { [$0] } ?? [])
        let selected = "SELECT \(values.joined(separator: ", "))"
        switch form {
        case .single: return selected
        case .batch: return selected + " FROM " + (fromNamedRows ? alias : unnested)
        }
    }

    /// In a batch, `alias AS (SELECT * FROM unnest(…) AS alias (…)),` and a new line, to open a `WITH`; nothing for
    /// one sign-in.
    var namedRows: String {
        form == .batch ? "\(alias) AS (SELECT * FROM \(unnested)),\n" : ""
    }

    /// `query` (which reads `self[…]`) for the sign-in, then `locking`: in a batch once for each of the rows
    /// `namedRows` named, as a lateral subquery that cannot be merged into a join (`OFFSET 0`).
    func eachRow(_ query: String, locking: String) -> String {
        switch form {
        case .single: query + locking
        case .batch: "SELECT locked.* FROM \(alias), LATERAL (\(query) OFFSET 0\(locking)) AS locked"
        }
    }

    /// After `selecting(…, then:)` that reads `name.…`: `query`'s row as `name`, in a batch for each row.
    func joiningEachRow(_ query: String, as name: String) -> String {
        switch form {
        case .single: " FROM (\(query)) AS \(name)"
        case .batch: ", LATERAL (\(query) OFFSET 0) AS \(name)"
        }
    }

    /// `text` in a batch only.
    func batched(_ text: String) -> String { form == .batch ? text : "" }
}

/// The sign-in's statements as text, for the benchmark that sends them without the bridge (`signin-sql`): each in
/// the order a sign-in writes them, on PostgreSQL, with every bound value spelled out by the caller.
package enum SignInStatementTexts {
    /// The login attempt, identity token, member and session statements in `form`, each `$n` replaced by
    /// `spell(table, parameter name, whether it is per sign-in)`.
    package static func postgres(_ form: SignInForm,
                                 spelling spell: (_ table: String, _ parameter: String, _ perSignIn: Bool) -> String) -> [String] {
        [spelled(AttemptSpend.table, form, spell), spelled(TokenUse.table, form, spell),
         spelled(MemberSignIn.table, form, spell), spelled(SessionOpening.table, form, spell)]
    }

    private static func spelled<Row>(_ table: SignInTable<Row>, _ form: SignInForm,
                                     _ spell: (String, String, Bool) -> String) -> String {
        var text = form == .single ? table.single(for: .postgres) : table.batch
        // The highest number first, so that `$1` does not take the front of `$10`.
        for (index, parameter) in table.parameters.enumerated().reversed() {
            text = text.replacingOccurrences(of: "$\(index + 1)", with: spell(table.name, parameter.name, parameter.perSignIn))
        }
        return text
    }
}
