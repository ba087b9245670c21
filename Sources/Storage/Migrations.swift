/// The schema, version by version, for every backend: the same tables, columns, keys and indexes. Times are whole
/// unix seconds (INTEGER on SQLite, BIGINT on PostgreSQL), flags 0/1 or BOOLEAN, bytes BLOB or BYTEA.
enum Migrations {
    /// Append only: never edit what a shipped migration does.
    static let all: [Migration] = [
        Migration(version: 1) { d in """
            CREATE TABLE users (
                id \(d.generatedID),
                provider TEXT NOT NULL,
                provider_user_id TEXT NOT NULL,
                email TEXT,
                is_private_email \(d.flag) NOT NULL DEFAULT \(d.flagLiteral(false)),
                email_verified \(d.flag) NOT NULL DEFAULT \(d.flagLiteral(false)),
                display_name TEXT,
                created_at \(d.time) NOT NULL,
                updated_at \(d.time) NOT NULL,
                UNIQUE (provider, provider_user_id)
            );
            CREATE TABLE login_attempts (
                state TEXT PRIMARY KEY,
                nonce TEXT NOT NULL,
                binding_hash TEXT NOT NULL,
                created_at \(d.time) NOT NULL,
                expires_at \(d.time) NOT NULL,
                consumed_at \(d.time)
            );
            CREATE INDEX login_attempts_expires_at ON login_attempts (expires_at);
            CREATE TABLE sessions (
                id_hash TEXT PRIMARY KEY,
                user_id \(d.bigInteger) NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                flow TEXT NOT NULL,
                nonce_verified \(d.flag) NOT NULL,
                created_at \(d.time) NOT NULL,
                expires_at \(d.time) NOT NULL
            );
            CREATE INDEX sessions_user_id ON sessions (user_id);
            CREATE INDEX sessions_expires_at ON sessions (expires_at);
            """
        },
        // Native JSON API: server-issued nonces, identity token replay guard, rotating
        // refresh tokens.
        Migration(version: 2) { d in """
            CREATE TABLE api_nonces (
                nonce TEXT PRIMARY KEY,
                created_at \(d.time) NOT NULL,
                expires_at \(d.time) NOT NULL,
                consumed_at \(d.time)
            );
            CREATE INDEX api_nonces_expires_at ON api_nonces (expires_at);
            CREATE TABLE used_identity_tokens (
                token_hash TEXT PRIMARY KEY,
                expires_at \(d.time) NOT NULL
            );
            CREATE INDEX used_identity_tokens_expires_at ON used_identity_tokens (expires_at);
            CREATE TABLE refresh_tokens (
                token_hash TEXT PRIMARY KEY,
                family_id TEXT NOT NULL,
                session_id_hash TEXT NOT NULL REFERENCES sessions (id_hash) ON DELETE CASCADE,
                user_id \(d.bigInteger) NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                created_at \(d.time) NOT NULL,
                expires_at \(d.time) NOT NULL,
                rotated_at \(d.time)
            );
            CREATE INDEX refresh_tokens_family_id ON refresh_tokens (family_id);
            CREATE INDEX refresh_tokens_user_id ON refresh_tokens (user_id);
            CREATE INDEX refresh_tokens_session_id_hash ON refresh_tokens (session_id_hash);
            CREATE INDEX refresh_tokens_expires_at ON refresh_tokens (expires_at);
            """
        },
        // Apple's server side: encrypted Apple refresh tokens, the revocation retry
        // queue (no foreign key: it outlives the deleted user), notification ids seen.
        Migration(version: 3) { d in """
            ALTER TABLE users ADD COLUMN email_forwarding_enabled \(d.flag) NOT NULL DEFAULT \(d.flagLiteral(true));
            CREATE TABLE apple_tokens (
                user_id \(d.bigInteger) PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
                client_id TEXT NOT NULL,
                encrypted_refresh_token \(d.bytes) NOT NULL,
                updated_at \(d.time) NOT NULL
            );
            CREATE TABLE pending_revocations (
                id \(d.generatedID),
                client_id TEXT NOT NULL,
                encrypted_token \(d.bytes) NOT NULL,
                token_type_hint TEXT NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0,
                next_attempt_at \(d.time) NOT NULL,
                last_error TEXT,
                created_at \(d.time) NOT NULL
            );
            CREATE INDEX pending_revocations_next_attempt_at ON pending_revocations (next_attempt_at);
            CREATE TABLE apple_notifications (
                jti TEXT PRIMARY KEY,
                received_at \(d.time) NOT NULL
            );
            CREATE INDEX apple_notifications_received_at ON apple_notifications (received_at);
            """
        },
        // Tombstones of refresh token families revoked for reuse, kept until they expire, so
        // that every later presentation of one of their tokens is still recognized as reuse.
        Migration(version: 4) { d in """
            CREATE TABLE revoked_refresh_tokens (
                token_hash TEXT PRIMARY KEY,
                family_id TEXT NOT NULL,
                session_id_hash TEXT NOT NULL,
                user_id \(d.bigInteger) NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                created_at \(d.time) NOT NULL,
                expires_at \(d.time) NOT NULL,
                rotated_at \(d.time)
            );
            CREATE INDEX revoked_refresh_tokens_user_id ON revoked_refresh_tokens (user_id);
            CREATE INDEX revoked_refresh_tokens_expires_at ON revoked_refresh_tokens (expires_at);
            """
        },
        // Member ids are never given out twice: without AUTOINCREMENT, SQLite reuses the id of the newest user after
        // it is deleted. Rebuilds users (same columns and rows). PostgreSQL's identity column never reuses one.
        Migration(version: 5, only: .sqlite, rebuildsReferencedTable: true, sql: """
            CREATE TABLE users_autoincrement (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                provider TEXT NOT NULL,
                provider_user_id TEXT NOT NULL,
                email TEXT,
                is_private_email INTEGER NOT NULL DEFAULT 0,
                email_verified INTEGER NOT NULL DEFAULT 0,
                display_name TEXT,
                created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL,
                email_forwarding_enabled INTEGER NOT NULL DEFAULT 1,
                UNIQUE (provider, provider_user_id)
            );
            INSERT INTO users_autoincrement (id, provider, provider_user_id, email, is_private_email, email_verified,
                                             display_name, created_at, updated_at, email_forwarding_enabled)
            SELECT id, provider, provider_user_id, email, is_private_email, email_verified,
                   display_name, created_at, updated_at, email_forwarding_enabled FROM users;
            DROP TABLE users;
            ALTER TABLE users_autoincrement RENAME TO users;
            """),
        // The OpenID provider: its signing keys (private halves sealed by the application), the authorization
        // requests waiting for Apple's answer, authorization codes, and which client each refresh-token family
        // belongs to.
        Migration(version: 6) { d in """
            CREATE TABLE provider_signing_keys (
                kid TEXT PRIMARY KEY,
                public_jwk TEXT NOT NULL,
                sealed_private_key \(d.bytes) NOT NULL,
                created_at \(d.time) NOT NULL,
                retired_at \(d.time)
            );
            CREATE TABLE provider_authorizations (
                state_hash TEXT PRIMARY KEY REFERENCES login_attempts (state) ON DELETE CASCADE,
                client_id TEXT NOT NULL,
                redirect_uri TEXT NOT NULL,
                client_state TEXT,
                nonce TEXT,
                code_challenge TEXT,
                scope TEXT NOT NULL,
                created_at \(d.time) NOT NULL
            );
            CREATE TABLE authorization_codes (
                code_hash TEXT PRIMARY KEY,
                client_id TEXT NOT NULL,
                redirect_uri TEXT NOT NULL,
                code_challenge TEXT,
                scope TEXT NOT NULL,
                nonce TEXT,
                user_id \(d.bigInteger) NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                auth_time \(d.time) NOT NULL,
                created_at \(d.time) NOT NULL,
                expires_at \(d.time) NOT NULL,
                redeemed_at \(d.time),
                family_id TEXT
            );
            CREATE INDEX authorization_codes_expires_at ON authorization_codes (expires_at);
            CREATE INDEX authorization_codes_user_id ON authorization_codes (user_id);
            CREATE TABLE provider_grants (
                family_id TEXT PRIMARY KEY,
                client_id TEXT NOT NULL,
                user_id \(d.bigInteger) NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                scope TEXT NOT NULL,
                auth_time \(d.time) NOT NULL,
                created_at \(d.time) NOT NULL
            );
            CREATE INDEX provider_grants_user_id ON provider_grants (user_id);
            """
        },
        // State several instances share.
        // rate_limits: one row per client, the time its bucket is full again (see
        // admitRateLimited); leases: work one instance at a time does (the sweeper).
        Migration(version: 7) { d in """
            CREATE TABLE rate_limits (
                client_key TEXT PRIMARY KEY,
                full_at_ms \(d.bigInteger) NOT NULL
            );
            CREATE INDEX rate_limits_full_at_ms ON rate_limits (full_at_ms);
            CREATE TABLE leases (
                name TEXT PRIMARY KEY,
                holder TEXT NOT NULL,
                expires_at \(d.time) NOT NULL
            );
            """
        },
        // The tables keyed by a random digest that every sign-in writes become WITHOUT ROWID on SQLite: one B-tree
        // per table instead of a rowid table plus the index of its primary key, so an insert or a lookup touches
        // one tree, and a batch of sign-ins dirties fewer pages. Same columns, rows and indexes. (PostgreSQL's
        // tables are heaps with a key index either way.)
        Migration(version: 8, only: .sqlite, rebuildsReferencedTable: true, sql: """
            CREATE TABLE sessions_keyed (
                id_hash TEXT PRIMARY KEY,
                user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                flow TEXT NOT NULL,
                nonce_verified INTEGER NOT NULL,
                created_at INTEGER NOT NULL,
                expires_at INTEGER NOT NULL
            ) WITHOUT ROWID;
            INSERT INTO sessions_keyed SELECT id_hash, user_id, flow, nonce_verified, created_at, expires_at FROM sessions;
            DROP TABLE sessions;
            ALTER TABLE sessions_keyed RENAME TO sessions;
            CREATE INDEX sessions_user_id ON sessions (user_id);
            CREATE INDEX sessions_expires_at ON sessions (expires_at);
            CREATE TABLE used_identity_tokens_keyed (
                token_hash TEXT PRIMARY KEY,
                expires_at INTEGER NOT NULL
            ) WITHOUT ROWID;
            INSERT INTO used_identity_tokens_keyed SELECT token_hash, expires_at FROM used_identity_tokens;
            DROP TABLE used_identity_tokens;
            ALTER TABLE used_identity_tokens_keyed RENAME TO used_identity_tokens;
            CREATE INDEX used_identity_tokens_expires_at ON used_identity_tokens (expires_at);
            """),
        // Used identity tokens keyed by the token's own `exp` first, then its digest: tokens arrive about in the order
        // they expire, so on SQLite a sign-in's record lands on the last pages of one B-tree instead of a random page
        // of the digest-keyed table and another of its expiry index. The `exp` claim is part of the token, so the key
        // of a replay is the key of the first use whatever the leeway. `expires_at` is until when a replay is
        // refused. Records made before this version stay in `used_identity_tokens` until they expire, and are still
        // checked.
        Migration(version: 9) { identityTokenUses.text(for: $0) },
        // PostgreSQL databases migrated before the schema was one list recorded version 9 without the table.
        Migration(version: 10) { identityTokenUses.text(for: $0) },
        // Why a refresh token family was revoked: a token presented again (a replay) or not (a client's revocation,
        // a replayed authorization code), so a later presentation is told which. Tombstones from before were kept
        // for reuse alone.
        Migration(version: 11) { d in
            "ALTER TABLE revoked_refresh_tokens ADD COLUMN revoked_for_reuse \(d.flag) NOT NULL DEFAULT \(d.flagLiteral(true))"
        },
        // Moving the app to another Apple developer team: each member's transfer identifier, recorded by
        // `transfer export` (the old team), and whether the member was moved to the new team's `sub` (by `transfer
        // import`, or by a sign-in whose token carries the `transfer_sub` claim). One row per member.
        Migration(version: 12) { d in """
            CREATE TABLE member_transfers (
                user_id \(d.bigInteger) PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
                transfer_sub TEXT NOT NULL UNIQUE,
                target_team TEXT NOT NULL,
                exported_at \(d.time) NOT NULL,
                imported_at \(d.time),
                new_sub TEXT,
                import_failure TEXT
            );
            """
        },
        // PostgreSQL orders TEXT by the database's collation. Under a linguistic one (en_US, an ICU locale), every
        // step down the index of a digest or of an Apple `sub` goes through the locale's comparison, and ties in an
        // `ORDER BY created_at, id_hash` fall in another order than SQLite's. Every TEXT column that is a key or is
        // indexed holds opaque bytes (digests, tokens' ids, client keys): it compares byte by byte, as SQLite's
        // always have (its BINARY collation). The indexes are rebuilt, not the tables; on a large database the
        // upgrade holds these tables locked while it runs.
        Migration(version: 13, only: .postgres, sql: byteOrderedKeys),
        // Member groups, joined by invitation (forward auth's `?group=`): one row per member and group, and
        // single-use invitations kept by the digest of their token. An invitation names no member: the group row
        // is what a redeemed one leaves, and a member's deletion takes it along.
        Migration(version: 14) { d in """
            CREATE TABLE member_groups (
                user_id \(d.bigInteger) NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                group_name \(d.byteOrderedText) NOT NULL,
                joined_at \(d.time) NOT NULL,
                PRIMARY KEY (user_id, group_name)
            );
            CREATE INDEX member_groups_group_name ON member_groups (group_name);
            CREATE TABLE group_invitations (
                token_hash \(d.byteOrderedText) PRIMARY KEY,
                group_name TEXT NOT NULL,
                created_at \(d.time) NOT NULL,
                expires_at \(d.time) NOT NULL,
                redeemed_at \(d.time)
            );
            CREATE INDEX group_invitations_expires_at ON group_invitations (expires_at);
            """
        },
        // How an OpenID client's authorization is answered once its sign-in finishes: in the redirect URI's query,
        // or by a form the browser posts there (OAuth 2.0 Form Post Response Mode). Those started before are query.
        Migration(version: 15) { _ in
            "ALTER TABLE provider_authorizations ADD COLUMN response_mode TEXT NOT NULL DEFAULT 'query'"
        },
        // Authorization codes the Android relay (`POST /apple/android/<package>`) handed to an app, by digest: Apple
        // issued each for that relay's URL, so the app's sign-in exchanges it with that redirect_uri. Shared by every
        // instance on the database; kept a little longer than Apple's codes live.
        Migration(version: 16) { d in """
            CREATE TABLE relayed_codes (
                code_hash \(d.byteOrderedText) PRIMARY KEY,
                redirect_uri TEXT NOT NULL,
                expires_at \(d.time) NOT NULL
            )\(d.withoutRowID);
            CREATE INDEX relayed_codes_expires_at ON relayed_codes (expires_at);
            """
        },
        // The webhook outbox (docs/webhooks.md): each event is written in the transaction of the change it reports and
        // stays until the operator's endpoint took it, or, kept past `give_up_at`, is marked failed. `message_id` is
        // the stable `webhook-id` of every attempt; `next_attempt_at` also claims an event for one instance at a time.
        Migration(version: 17) { d in """
            CREATE TABLE webhook_outbox (
                id \(d.generatedID),
                message_id \(d.byteOrderedText) NOT NULL UNIQUE,
                event_type TEXT NOT NULL,
                payload TEXT NOT NULL,
                created_at \(d.time) NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0,
                next_attempt_at \(d.time) NOT NULL,
                give_up_at \(d.time) NOT NULL,
                last_error TEXT,
                failed_at \(d.time)
            );
            CREATE INDEX webhook_outbox_next_attempt_at ON webhook_outbox (next_attempt_at);
            """
        },
    ]

    /// The TEXT columns of keys and indexes, by table; new ones are declared `COLLATE "C"` on PostgreSQL
    /// (`SchemaParityTests` checks it). In the order a sign-in locks the tables (a web sign-in's attempt, or a native
    /// one's nonce, then the token's record, its pre-version-9 table, the member, the session), so that the migration's
    /// locks meet the sign-ins of an older instance still serving with fewer deadlocks; `PostgresMigrator` runs it
    /// again after one.
    static let byteOrderedColumns: [(table: String, columns: [String])] = [
        ("login_attempts", ["state"]),
        ("api_nonces", ["nonce"]),
        ("identity_token_uses", ["token_hash"]),
        ("used_identity_tokens", ["token_hash"]),
        ("users", ["provider", "provider_user_id"]),
        ("sessions", ["id_hash"]),
        ("refresh_tokens", ["token_hash", "family_id", "session_id_hash"]),
        ("revoked_refresh_tokens", ["token_hash"]),
        ("apple_notifications", ["jti"]),
        ("provider_signing_keys", ["kid"]),
        ("provider_authorizations", ["state_hash"]),
        ("authorization_codes", ["code_hash"]),
        ("provider_grants", ["family_id"]),
        ("rate_limits", ["client_key"]),
        ("leases", ["name"]),
        ("member_transfers", ["transfer_sub"]),
    ]

    private static let byteOrderedKeys = byteOrderedColumns.map { table, columns in
        "ALTER TABLE \(table) " + columns.map { "ALTER COLUMN \($0) TYPE TEXT COLLATE \"C\"" }.joined(separator: ", ") + ";"
    }.joined(separator: "\n")

    private static let identityTokenUses = DialectStatement { d in """
        CREATE TABLE IF NOT EXISTS identity_token_uses (
            token_expires_at \(d.time) NOT NULL,
            token_hash TEXT NOT NULL,
            expires_at \(d.time) NOT NULL,
            PRIMARY KEY (token_expires_at, token_hash)
        )\(d.withoutRowID);
        """
    }
}
