import Foundation

extension SQLTransaction {
    // MARK: - Webhook outbox

    func enqueueWebhookEvent(messageID: String, eventType: String, payload: String, now: Date, giveUpAt: Date) throws {
        try run("""
            INSERT INTO webhook_outbox (message_id, event_type, payload, created_at, attempts, next_attempt_at, give_up_at)
            VALUES ($1, $2, $3, $4, 0, $4, $5)
            """, [.text(messageID), .text(eventType), .text(payload), .date(now), .date(giveUpAt)])
    }

    /// Rows another instance is claiming right now are skipped, not waited for.
    func claimDueWebhookEvents(now: Date, limit: Int, claimedUntil: Date) throws -> [WebhookOutboxEvent] {
        let due = try select(.webhookOutbox, SQLStatements.claimDueWebhookEvents.text(for: dialect),
                             [.date(now), .integer(Int64(max(0, limit)))])
        for event in due {
            try run("UPDATE webhook_outbox SET next_attempt_at = $1 WHERE id = $2", [.date(claimedUntil), .integer(event.id)])
        }
        return due
    }

    func completeWebhookEvent(id: Int64) throws {
        try run("DELETE FROM webhook_outbox WHERE id = $1", [.integer(id)])
    }

    func postponeWebhookEvent(id: Int64, nextAttemptAt: Date, error: String) throws {
        try run("UPDATE webhook_outbox SET attempts = attempts + 1, next_attempt_at = $1, last_error = $2 WHERE id = $3",
                [.date(nextAttemptAt), .text(error), .integer(id)])
    }

    func failWebhookEvent(id: Int64, now: Date, error: String) throws {
        try run("UPDATE webhook_outbox SET attempts = attempts + 1, failed_at = $1, last_error = $2 WHERE id = $3",
                [.date(now), .text(error), .integer(id)])
    }

    func webhookEvents(failedOnly: Bool, limit: Int) throws -> [WebhookOutboxEvent] {
        try select(.webhookOutbox, (failedOnly ? " WHERE failed_at IS NOT NULL" : "") + " ORDER BY id LIMIT $1",
                   [.integer(Int64(max(0, limit)))])
    }

    func retryWebhookEvents(now: Date, giveUpAt: Date) throws -> Int {
        let revived = try run("""
            UPDATE webhook_outbox SET failed_at = NULL, next_attempt_at = $1, give_up_at = $2 WHERE failed_at IS NOT NULL
            """, [.date(now), .date(giveUpAt)])
        try run("UPDATE webhook_outbox SET next_attempt_at = $1 WHERE failed_at IS NULL AND next_attempt_at > $1", [.date(now)])
        return revived
    }

    func webhookBacklog() throws -> WebhookBacklog {
        try query("""
            SELECT COUNT(*) FILTER (WHERE failed_at IS NULL) AS pending, COUNT(*) FILTER (WHERE failed_at IS NOT NULL) AS failed,
                MIN(created_at) FILTER (WHERE failed_at IS NULL) AS oldest
            FROM webhook_outbox
            """) { row in
            WebhookBacklog(pending: Int(try row.requiredInteger("pending")), failed: Int(try row.requiredInteger("failed")),
                           oldestPendingCreatedAt: try row.optionalDate("oldest"))
        }.first ?? WebhookBacklog(pending: 0, failed: 0, oldestPendingCreatedAt: nil)
    }
}

extension SQLTransaction {
    func nextWebhookAttemptAt() throws -> Date? {
        try query("""
            SELECT next_attempt_at FROM webhook_outbox WHERE failed_at IS NULL ORDER BY next_attempt_at LIMIT 1
            """) { try $0.date("next_attempt_at") }.first
    }
}

extension SQLStatements {
    static let claimDueWebhookEvents = DialectStatement { dialect in
        " WHERE failed_at IS NULL AND next_attempt_at <= $1 ORDER BY next_attempt_at, id LIMIT $2\(dialect.skippingLockedRows)"
    }
}

extension TableMapping where Model == WebhookOutboxEvent {
    static let webhookOutbox = TableMapping(table: "webhook_outbox", columns: [
        "id", "message_id", "event_type", "payload", "created_at", "attempts", "next_attempt_at", "give_up_at",
        "last_error", "failed_at",
    ]) { row in
        WebhookOutboxEvent(id: try row.requiredInteger("id"), messageID: try row.requiredText("message_id"),
                           eventType: try row.requiredText("event_type"), payload: try row.requiredText("payload"),
                           createdAt: try row.date("created_at"), attempts: Int(try row.requiredInteger("attempts")),
                           nextAttemptAt: try row.date("next_attempt_at"), giveUpAt: try row.date("give_up_at"),
                           lastError: try row.text("last_error"), failedAt: try row.optionalDate("failed_at"))
    }
}
