import Foundation
import Storage

// Prints a web sign-in's statements for pgbench, made from the store's own declarations of the sign-in tables
// (Sources/Storage/SignInTables.swift), with pgbench's variables where the bridge binds values:
//   signin-sql single        one sign-in's transaction as the bridge sends a lone one: two pipelined round trips
//   signin-sql coalesced N   N sign-ins in one transaction as PostgresCoalescedSignIns sends a batch: one statement per
//                            table over arrays, then the COMMIT
// scripts/bench signin runs them beside the bridge. Login attempts 'pgbench-st1' through 'pgbench-st200000' must
// exist first; each sign-in draws a (its attempt), t (its token) and u (its member).

/// What pgbench binds for a parameter of a sign-in table: for sign-in `n` (nil: the one sign-in's own variables).
func value(_ table: String, _ parameter: String, signIn n: Int?) -> String {
    let suffix = n.map { "_\($0)" } ?? ""
    let member = "'pgbench-sub' || :u\(suffix) || '-' || :client_id"
    switch (table, parameter) {
    case ("login_attempts", "state"): return "'pgbench-st' || :a\(suffix)"
    case ("identity_token_uses", "token_hash"): return "'pgbench-token' || :t\(suffix) || '-' || :client_id"
    case ("identity_token_uses", "token_expires_at"), ("sessions", "expires_at"): return "2000000000"
    case ("identity_token_uses", "expires_at"): return "2000000600"
    case (_, "now"), (_, "created_at"), (_, "updated_at"): return "1"
    case (_, "provider"): return "'apple'"
    case (_, "provider_user_id"): return member
    case ("users", "email"): return "'member@privaterelay.appleid.com'"
    case ("users", "display_name"): return "NULL"
    case ("users", _), ("sessions", "nonce_verified"): return "true"
    case ("sessions", "id_hash"): return "'pgbench-session' || :u\(suffix) || '-' || :client_id || '-' || :t\(suffix)"
    case ("sessions", "flow"): return "'web'"
    default:
        FileHandle.standardError.write(Data("signin-sql: no pgbench value for \(table).\(parameter)\n".utf8))
        exit(1)
    }
}

func variables(_ suffix: String) -> String {
    """
    \\set a\(suffix) random(1, 200000)
    \\set t\(suffix) random(1, 2000000000)
    \\set u\(suffix) random(1, 2000000000)
    """
}

let arguments = CommandLine.arguments.dropFirst()
switch (arguments.first, arguments.dropFirst().first.flatMap { Int($0) }) {
case ("single", nil) where arguments.count == 1:
    let statements = SignInStatementTexts.postgres(.single) { table, parameter, _ in value(table, parameter, signIn: nil) }
    print("""
        -- One web sign-in's transaction as the bridge sends it to PostgreSQL, printed by signin-sql from the store's
        -- declarations: two round trips, as the bridge's pipelines make them. The first carries the BEGIN, the attempt
        -- spent, the identity token recorded, and the member looked up locked or inserted in one statement; the second
        -- the session (which finds its member by its Apple sub, as a lone sign-in's does while its id is not known) and
        -- the COMMIT.
        \(variables(""))
        \\startpipeline
        BEGIN ISOLATION LEVEL READ COMMITTED;
        \(statements[0]);
        \(statements[1]);
        \(statements[2]);
        \\endpipeline
        \\startpipeline
        \(statements[3]);
        COMMIT;
        \\endpipeline
        """)
case ("coalesced", let count?) where arguments.count == 2 && count >= 1:
    let statements = SignInStatementTexts.postgres(.batch) { table, parameter, perSignIn in
        guard perSignIn else { return value(table, parameter, signIn: nil) }
        return "ARRAY[" + (1...count).map { value(table, parameter, signIn: $0) }.joined(separator: ", ") + "]"
    }
    print((1...count).map { variables("_\($0)") }.joined(separator: "\n"))
    print("""
        \\startpipeline
        BEGIN ISOLATION LEVEL READ COMMITTED;
        SET LOCAL lock_timeout = '100ms';
        \(statements.map { $0 + ";" }.joined(separator: "\n"))
        \\endpipeline
        \\startpipeline
        COMMIT;
        \\endpipeline
        """)
default:
    FileHandle.standardError.write(Data("usage: signin-sql single | signin-sql coalesced N\n".utf8))
    exit(2)
}
