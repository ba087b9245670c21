import Foundation

/// What instances sharing a database agree on (see `StoreTransaction`). On SQLite the
/// single writer serialises these, so plain statements suffice.
extension SQLiteTransaction {
    func admitRateLimited(key: String, now: Date, interval: TimeInterval, burst: Int) throws -> Bool {
        let limit = try RateLimitArguments(key: key, now: now, interval: interval, burst: burst)
        return try connection.run("""
            INSERT INTO rate_limits (client_key, full_at_ms) VALUES (?1, ?2 + ?3)
            ON CONFLICT (client_key) DO UPDATE SET full_at_ms = MAX(rate_limits.full_at_ms, ?2) + ?3
            WHERE MAX(rate_limits.full_at_ms, ?2) + ?3 - ?2 <= ?4
            """, [.text(limit.key), .integer(limit.nowMilliseconds), .integer(limit.intervalMilliseconds),
                  .integer(limit.windowMilliseconds)]) == 1
    }

    func deleteIdleRateLimits(now: Date) throws -> Int {
        try connection.run("DELETE FROM rate_limits WHERE full_at_ms <= ?",
                           [.integer(RateLimitArguments.milliseconds(now))])
    }

    func acquireLease(name: String, holder: String, now: Date, until: Date) throws -> Bool {
        try connection.run("""
            INSERT INTO leases (name, holder, expires_at) VALUES (?1, ?2, ?4)
            ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
            WHERE leases.expires_at <= ?3 OR leases.holder = excluded.holder
            """, [.text(name), .text(holder), .date(now), .date(until)]) == 1
    }

    func claimDueRevocations(now: Date, limit: Int, claimedUntil: Date) throws -> [PendingRevocation] {
        let due = try dueRevocations(now: now, limit: limit)
        for item in due {
            try connection.run("UPDATE pending_revocations SET next_attempt_at = ? WHERE id = ?",
                               [.date(claimedUntil), .integer(item.id)])
        }
        return due
    }
}
