# Sourced by scripts/bench: the statements of a batch of sign-ins as PostgresCoalescedSignIns sends it, for pgbench.

# coalesced_signin_sql: those statements for coalesced_script's n sign-ins, with its ARRAY[...]s of pgbench's
# variables ($states, $tokens, $subs, $sessions and list's) where the bridge binds arrays: the BEGIN, the lock
# timeout and one statement per kind of write in one round trip, the COMMIT in a second.
coalesced_signin_sql() {
    cat <<SQL
\startpipeline
BEGIN ISOLATION LEVEL READ COMMITTED;
SET LOCAL lock_timeout = '100ms';
UPDATE login_attempts SET consumed_at = 1 WHERE state = ANY ($states::text[]) AND consumed_at IS NULL AND expires_at > 1;
INSERT INTO identity_token_uses (token_expires_at, token_hash, expires_at)
    SELECT used.token_expires_at, used.token_hash, used.expires_at
    FROM unnest($(list 2000000000 '::int8[]'), $tokens::text[], $(list 2000000600 '::int8[]'))
        AS used (token_expires_at, token_hash, expires_at)
    WHERE NOT EXISTS (SELECT 1 FROM used_identity_tokens
                      WHERE used_identity_tokens.token_hash = used.token_hash AND used_identity_tokens.expires_at > 1)
    ON CONFLICT (token_expires_at, token_hash) DO UPDATE SET expires_at = excluded.expires_at
    WHERE identity_token_uses.expires_at <= 1;
WITH wanted AS (
    SELECT * FROM unnest($(list "'apple'" '::text[]'), $subs::text[], $(list "'member@privaterelay.appleid.com'" '::text[]'),
                         $(list true '::bool[]'), $(list true '::bool[]'), $(list NULL '::text[]'), $(list 1 '::int8[]'),
                         $(list 1 '::int8[]'), $(list true '::bool[]'))
        AS wanted (provider, provider_user_id, email, is_private_email, email_verified, display_name, created_at,
                   updated_at, email_forwarding_enabled)),
found AS (
    SELECT locked.* FROM wanted, LATERAL (
        SELECT id, provider, provider_user_id, email, is_private_email, email_verified, display_name, created_at,
               updated_at, email_forwarding_enabled FROM users
        WHERE users.provider = wanted.provider AND users.provider_user_id = wanted.provider_user_id
        OFFSET 0 FOR NO KEY UPDATE) AS locked),
inserted AS (
    INSERT INTO users (provider, provider_user_id, email, is_private_email, email_verified, display_name, created_at,
                       updated_at, email_forwarding_enabled)
    SELECT provider, provider_user_id, email, is_private_email, email_verified, display_name, created_at, updated_at,
           email_forwarding_enabled FROM wanted WHERE NOT EXISTS (
        SELECT 1 FROM found WHERE found.provider = wanted.provider AND found.provider_user_id = wanted.provider_user_id)
    ON CONFLICT (provider, provider_user_id) DO NOTHING
    RETURNING id, provider_user_id)
SELECT id, provider_user_id, false AS created FROM found UNION ALL SELECT id, provider_user_id, true AS created FROM inserted;
INSERT INTO sessions (id_hash, flow, nonce_verified, created_at, expires_at, user_id)
    SELECT opened.id_hash, opened.flow, opened.nonce_verified, opened.created_at, opened.expires_at, owner.id
    FROM unnest($sessions::text[], $(list "'web'" '::text[]'), $(list true '::bool[]'), $(list 1 '::int8[]'),
                $(list 2000000000 '::int8[]'), $(list "'apple'" '::text[]'), $subs::text[])
        AS opened (id_hash, flow, nonce_verified, created_at, expires_at, provider, provider_user_id),
    LATERAL (SELECT id FROM users WHERE users.provider = opened.provider AND users.provider_user_id = opened.provider_user_id
             OFFSET 0) AS owner;
\endpipeline
\startpipeline
COMMIT;
\endpipeline
SQL
}
