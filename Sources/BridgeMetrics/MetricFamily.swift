/// What each metric at `/metrics` means: its name, type, help line and (for a histogram) buckets. Every name the
/// code records or collects belongs here, and docs/operations.md's metrics section describes the same list; the
/// dashboard and the alert rules in docs/operations/ use these names, and `scripts/operations-check` fails when
/// they name one `/metrics` does not list.
public struct MetricFamily: Sendable {
    public enum Kind: String, Sendable {
        case counter, gauge, histogram
    }

    public let name: String
    public let kind: Kind
    public let help: String
    /// A histogram's upper bounds, in its unit, ascending (+Inf is implied).
    public let buckets: [Double]?

    package init(_ name: String, _ kind: Kind, _ help: String, buckets: [Double]? = nil) {
        self.name = name
        self.kind = kind
        self.help = help
        self.buckets = kind == .histogram ? buckets ?? Self.defaultBuckets : nil
    }

    /// Seconds, from a static file's few milliseconds to the 6 s a request may wait on Apple.
    package static let defaultBuckets: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    public static func named(_ name: String) -> MetricFamily? { byName[name] }

    private static let byName = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })

    public static let all: [MetricFamily] = [
        // Signing in.
        MetricFamily("bridge_login_attempts_total", .counter,
                     "Login pages served by GET /login, each a new login attempt (state and nonce)."),
        MetricFamily("bridge_sign_ins_total", .counter,
                     "Sign-ins that opened a session, by flow (web, webview-native, api)."),
        MetricFamily("bridge_callback_rejections_total", .counter,
                     "Sign-ins refused at POST /apple_redirect (web and webview flows), by reason; user_cancelled is the person's choice."),
        MetricFamily("bridge_callback_reposts_total", .counter,
                     "Apple callbacks that arrived without the binding cookie and were re-posted from the same origin."),
        MetricFamily("bridge_api_rejections_total", .counter,
                     "Identity tokens refused by POST /api/auth/apple (api flow), by reason."),
        MetricFamily("bridge_refresh_reuse_total", .counter,
                     "Refresh tokens presented again after rotation; each revokes its whole family."),
        // Apple.
        MetricFamily("bridge_apple_calls_total", .counter,
                     "Calls to Apple by endpoint and result (ok, client_error, server_error, timeout, unreachable, refused by the guard)."),
        MetricFamily("bridge_apple_call_duration_seconds", .histogram,
                     "How long calls to Apple took, by endpoint, until the answer or the deadline (calls the guard refused excluded)."),
        MetricFamily("bridge_apple_calls_in_flight", .gauge,
                     "Calls to Apple under way now (the cap is APPLE_MAX_CALLS_IN_FLIGHT)."),
        MetricFamily("bridge_apple_breaker_open", .gauge,
                     "1 while the circuit breaker of an Apple endpoint refuses calls (open or half-open), else 0."),
        MetricFamily("bridge_jwks_fetches_total", .counter, "Fetches of Apple's signing keys (JWKS)."),
        MetricFamily("bridge_code_exchanges_total", .counter,
                     "Authorization code exchanges at Apple's /auth/token during sign-ins, by result (ok, failed, not_attempted)."),
        MetricFamily("bridge_code_exchange_retries_total", .counter,
                     "Code exchanges retried in the background, by result (ok, given_up, dropped)."),
        MetricFamily("bridge_notifications_total", .counter,
                     "Apple server-to-server notifications, by result (the event handled, or rejected)."),
        // Accounts and revocation.
        MetricFamily("bridge_accounts_deleted_total", .counter,
                     "Accounts deleted, by what happened at Apple (revoked, queued for retry, none to revoke)."),
        MetricFamily("bridge_revocation_attempts_total", .counter,
                     "Queued Apple revocations tried again, by result (completed, unneeded, failed)."),
        MetricFamily("bridge_revocations_pending", .gauge,
                     "Apple revocations waiting in the shared queue, as last counted (at start-up and after each pass, every 30 s)."),
        MetricFamily("bridge_revocation_oldest_pending_age_seconds", .gauge,
                     "Age of the oldest queued Apple revocation, as last counted; 0 when the queue is empty."),
        // Webhooks to the operator's backend (docs/webhooks.md).
        MetricFamily("bridge_webhook_deliveries_total", .counter,
                     "Attempts to post a webhook event, by result (delivered, retrying, failed)."),
        MetricFamily("bridge_webhook_events_pending", .gauge,
                     "Webhook events waiting in the outbox to be delivered, as last counted (after each pass, at least every 15 s)."),
        MetricFamily("bridge_webhook_events_failed", .gauge,
                     "Webhook events given up on after days of retries, until webhooks retry, as last counted."),
        MetricFamily("bridge_webhook_oldest_pending_age_seconds", .gauge,
                     "Age of the oldest webhook event waiting in the outbox, as last counted; 0 when none waits."),
        // The OpenID provider.
        MetricFamily("bridge_oidc_authorize_refusals_total", .counter, "OpenID authorization requests refused, by error."),
        MetricFamily("bridge_oidc_authorizations_started_total", .counter,
                     "OpenID authorizations that went on to Apple's sign-in, by client_id."),
        MetricFamily("bridge_oidc_codes_issued_total", .counter, "OpenID authorization codes issued, by client_id."),
        MetricFamily("bridge_oidc_single_sign_ons_total", .counter,
                     "OpenID authorizations answered from the browser's session without a new sign-in, by client_id."),
        MetricFamily("bridge_oidc_code_replays_total", .counter, "OpenID authorization codes presented a second time."),
        MetricFamily("bridge_oidc_tokens_issued_total", .counter, "OpenID token responses, by grant_type."),
        // The database.
        MetricFamily("bridge_database_errors_total", .counter,
                     "Requests that failed on the database, by kind (unavailable: unreachable or too slow, answered 503; error: any other)."),
        MetricFamily("bridge_login_attempt_lookups_total", .counter,
                     "Sign-in callbacks' login attempts by where they were found (source: memory, remembered by this instance since its GET /login; state, opened from the callback's sealed state; database, read)."),
        MetricFamily("bridge_store_write_retries_total", .counter,
                     "PostgreSQL writes run again after losing a race with another instance, by cause (serialization_failure, deadlock)."),
        MetricFamily("bridge_store_group_commits_total", .counter,
                     "Write transactions that committed writes queued together (every write on SQLite; READ COMMITTED writes such as sign-ins, login attempts and rate limits on PostgreSQL)."),
        MetricFamily("bridge_store_group_committed_writes_total", .counter,
                     "The writes those transactions committed: divided by bridge_store_group_commits_total, how many one COMMIT carried."),
        MetricFamily("bridge_store_group_commit_replays_total", .counter,
                     "Batches in which a write failed after writing, so that the batch's other writes ran again (SQLite: each in a savepoint; PostgreSQL: each alone)."),
        MetricFamily("bridge_store_group_coalesced_commits_total", .counter,
                     "Of those commits, the PostgreSQL ones whose sign-ins went out as one statement per kind of write (attempts spent, tokens recorded, members found or inserted, sessions opened)."),
        MetricFamily("bridge_store_lock_timeouts_total", .counter,
                     "PostgreSQL store calls that waited past the 3 s lock timeout for a row another transaction held (answered 503)."),
        // HTTP.
        MetricFamily("bridge_http_request_duration_seconds", .histogram,
                     "Time from a request's arrival to the end of its answer, by route (a registered path or prefix; other for the rest)."),
    ]
}
