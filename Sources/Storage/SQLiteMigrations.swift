enum SQLiteMigrations {
    /// Append only: never edit a migration that has shipped.
    static let all: [Migration] = [
        Migration(version: 1, sql: """
            CREATE TABLE users (
                id INTEGER PRIMARY KEY,
                provider TEXT NOT NULL,
                provider_user_id TEXT NOT NULL,
                email TEXT,
                is_private_email INTEGER NOT NULL DEFAULT 0,
                email_verified INTEGER NOT NULL DEFAULT 0,
                display_name TEXT,
                created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL,
                UNIQUE (provider, provider_user_id)
            );
            CREATE TABLE login_attempts (
                state TEXT PRIMARY KEY,
                nonce TEXT NOT NULL,
                binding_hash TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                expires_at INTEGER NOT NULL,
                consumed_at INTEGER
            );
            CREATE INDEX login_attempts_expires_at ON login_attempts (expires_at);
            CREATE TABLE sessions (
                id_hash TEXT PRIMARY KEY,
                user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                flow TEXT NOT NULL,
                nonce_verified INTEGER NOT NULL,
                created_at INTEGER NOT NULL,
                expires_at INTEGER NOT NULL
            );
            CREATE INDEX sessions_user_id ON sessions (user_id);
            CREATE INDEX sessions_expires_at ON sessions (expires_at);
            """),
    ]
}
