-- One web sign-in's transaction as the bridge sends it to PostgreSQL, for pgbench (scripts/bench signin runs it beside
-- the bridge), for a new member: two round trips, as the bridge's pipelines make them. The first carries the BEGIN,
-- the attempt spent, the identity token recorded, and the member looked up locked or inserted in one statement; the
-- second the session and the COMMIT. pgbench cannot carry a result from one pipeline to the next (no \gset in
-- pipeline mode), so the session finds its member by a subquery where the bridge binds the id: one index probe more.
-- The callback's read of its login attempt, which the bridge makes only for an attempt it does not remember, is
-- Benchmarks/postgres/attempt-read.sql; scripts/bench adds it to as many transactions as the bridge read attempts.
-- scripts/bench also runs it N to a transaction (grouped_script), as the bridge's group commit sends sign-ins that
-- arrive together: each session then goes out with the next sign-in's first round trip.
-- No HTTP, no RSA, no bridge: what PostgreSQL alone manages on this machine. Login attempts 'pgbench-st1' through
-- 'pgbench-st200000' are inserted first.
\set a random(1, 200000)
\set t random(1, 2000000000)
\set u random(1, 2000000000)
\startpipeline
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
SELECT id AS member_id FROM found UNION ALL SELECT id FROM inserted;
\endpipeline
\startpipeline
INSERT INTO sessions (id_hash, user_id, flow, nonce_verified, created_at, expires_at)
    SELECT 'pgbench-session' || :u || '-' || :client_id || '-' || :t, id, 'web', true, 1, 2000000000 FROM users
    WHERE provider = 'apple' AND provider_user_id = 'pgbench-sub' || :u || '-' || :client_id;
COMMIT;
\endpipeline
