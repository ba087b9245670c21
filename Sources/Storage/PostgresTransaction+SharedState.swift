import Foundation

/// What instances sharing the database agree on (see `StoreTransaction`): each is one
/// statement on rows that concurrent instances lock, so the SERIALIZABLE retry settles races.
extension PostgresTransaction {
    func admitRateLimited(key: String, now: Date, interval: TimeInterval, burst: Int) throws -> Bool {
        let limit = try RateLimitArguments(key: key, now: now, interval: interval, burst: burst)
        return try run("""
            INSERT INTO rate_limits (client_key, full_at_ms) VALUES ($1, $2 + $3)
            ON CONFLICT (client_key) DO UPDATE SET full_at_ms = GREATEST(rate_limits.full_at_ms, $2) + $3
            WHERE GREATEST(rate_limits.full_at_ms, $2) + $3 - $2 <= $4
            """, [.text(limit.key), .integer(limit.nowMilliseconds), .integer(limit.intervalMilliseconds),
                  .integer(limit.windowMilliseconds)]) == 1
    }

    func deleteIdleRateLimits(now: Date) throws -> Int {
        try run("DELETE FROM rate_limits WHERE full_at_ms <= $1", [.integer(RateLimitArguments.milliseconds(now))])
    }

    func acquireLease(name: String, holder: String, now: Date, until: Date) throws -> Bool {
        try run("""
            INSERT INTO leases (name, holder, expires_at) VALUES ($1, $2, $4)
            ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
            WHERE leases.expires_at <= $3 OR leases.holder = excluded.holder
            """, [.text(name), .text(holder), .date(now), .date(until)]) == 1
    }

    /// Rows another instance is claiming right now are skipped, not waited for.
    func claimDueRevocations(now: Date, limit: Int, claimedUntil: Date) throws -> [PendingRevocation] {
        try query("""
            WITH claimed AS (
                SELECT id, next_attempt_at AS was_due FROM pending_revocations WHERE next_attempt_at <= $1
                ORDER BY next_attempt_at, id LIMIT $2 FOR UPDATE SKIP LOCKED
            )
            UPDATE pending_revocations AS queued SET next_attempt_at = $3 FROM claimed WHERE queued.id = claimed.id
            RETURNING queued.id, queued.client_id, queued.encrypted_token, queued.token_type_hint, queued.attempts,
                      claimed.was_due, queued.last_error, queued.created_at
            """, [.date(now), .integer(Int64(max(0, limit))), .date(claimedUntil)]) { row in
            PendingRevocation(id: row.int64("id"), clientID: row.text("client_id"),
                              encryptedToken: row.blob("encrypted_token"), tokenTypeHint: row.text("token_type_hint"),
                              attempts: Int(row.int64("attempts")), nextAttemptAt: row.date("was_due"),
                              lastError: row.optionalText("last_error"), createdAt: row.date("created_at"))
        }.sorted { ($0.nextAttemptAt, $0.id) < ($1.nextAttemptAt, $1.id) }
    }
}
