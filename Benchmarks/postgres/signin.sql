-- One web sign-in's statements as the bridge sends them to PostgreSQL, for pgbench (scripts/bench signin runs it
-- beside the bridge): the callback's read of its login attempt, then the sign-in's transaction for a new member
-- (spend the attempt, record the identity token, look the member up locked or insert them in one statement,
-- open a session).
-- No HTTP, no RSA, no bridge: what PostgreSQL alone manages on this machine. Login attempts 'pgbench-st1'
-- through 'pgbench-st200000' are inserted first.
\set a random(1, 200000)
\set t random(1, 2000000000)
\set u random(1, 2000000000)
SELECT state, nonce, binding_hash, consumed_at, expires_at FROM login_attempts WHERE state = 'pgbench-st' || :a;
BEGIN ISOLATION LEVEL READ COMMITTED;
UPDATE login_attempts SET consumed_at = 1 WHERE state = 'pgbench-st' || :a AND consumed_at IS NULL AND expires_at > 1;
INSERT INTO identity_token_uses (token_expires_at, token_hash, expires_at)
    SELECT 2000000000, 'pgbench-token' || :t || '-' || :client_id, 2000000600 WHERE NOT EXISTS (
        SELECT 1 FROM used_identity_tokens WHERE token_hash = 'pgbench-token' || :t || '-' || :client_id AND expires_at > 1)
    ON CONFLICT (token_expires_at, token_hash) DO UPDATE SET expires_at = excluded.expires_at
    WHERE identity_token_uses.expires_at <= 1;
WITH found AS (SELECT id FROM users WHERE provider = 'apple'
                   AND provider_user_id = 'pgbench-sub' || :u || '-' || :client_id FOR NO KEY UPDATE),
inserted AS (
    INSERT INTO users (provider, provider_user_id, email, is_private_email, email_verified, display_name, created_at,
                       updated_at, email_forwarding_enabled)
    SELECT 'apple', 'pgbench-sub' || :u || '-' || :client_id, 'member@privaterelay.appleid.com', true, true, NULL, 1, 1,
           true WHERE NOT EXISTS (SELECT 1 FROM found)
    ON CONFLICT (provider, provider_user_id) DO NOTHING RETURNING id)
SELECT id AS member_id FROM found UNION ALL SELECT id FROM inserted \gset
INSERT INTO sessions (id_hash, user_id, flow, nonce_verified, created_at, expires_at)
    VALUES ('pgbench-session' || :u || '-' || :client_id || '-' || :t, :member_id, 'web', true, 1, 2000000000);
COMMIT;
