-- A callback's read of its login attempt (with the OpenID authorization it may finish), as the bridge sends it when
-- the attempt is not one it remembers: made by another instance, or pushed out by newer ones. scripts/bench puts it
-- before the sign-in's statements (`signin-sql single`) in as many pgbench transactions as the bridge read attempts.
SELECT login_attempts.state, login_attempts.nonce, login_attempts.binding_hash, login_attempts.created_at,
       login_attempts.expires_at, login_attempts.consumed_at, provider_authorizations.client_id AS authorization_client_id,
       provider_authorizations.redirect_uri AS authorization_redirect_uri, provider_authorizations.scope AS authorization_scope
FROM login_attempts LEFT JOIN provider_authorizations ON provider_authorizations.state_hash = login_attempts.state
WHERE login_attempts.state = 'pgbench-st' || :a;
