import Foundation

/// What instances sharing a database agree on (see `StoreTransaction`). Each is one statement on rows that
/// concurrent instances lock: on PostgreSQL the SERIALIZABLE retry settles races, on SQLite the single writer
/// serializes them.
extension SQLTransaction {
    func admitRateLimited(key: String, now: Date, interval: TimeInterval, burst: Int) throws -> Bool {
        let limit = try RateLimitArguments(key: key, now: now, interval: interval, burst: burst)
        return try run(SQLStatements.admitRateLimited.text(for: dialect),
                       [.text(limit.key), .integer(limit.nowMilliseconds), .integer(limit.intervalMilliseconds),
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
        let due = try select(.pendingRevocations, SQLStatements.claimDueRevocations.text(for: dialect),
                             [.date(now), .integer(Int64(max(0, limit)))])
        for item in due {
            try run("UPDATE pending_revocations SET next_attempt_at = $1 WHERE id = $2",
                    [.date(claimedUntil), .integer(item.id)])
        }
        return due
    }
}

extension SQLStatements {
    /// GCRA in one upsert: the bucket is the time at which it is empty again.
    static let admitRateLimited = DialectStatement { dialect in
        let bucket = dialect.greatest("rate_limits.full_at_ms", "$2")
        return """
            INSERT INTO rate_limits (client_key, full_at_ms) VALUES ($1, $2 + $3)
            ON CONFLICT (client_key) DO UPDATE SET full_at_ms = \(bucket) + $3
            WHERE \(bucket) + $3 - $2 <= $4
            """
    }

    static let claimDueRevocations = DialectStatement { dialect in
        " WHERE next_attempt_at <= $1 ORDER BY next_attempt_at, id LIMIT $2\(dialect.skippingLockedRows)"
    }
}
