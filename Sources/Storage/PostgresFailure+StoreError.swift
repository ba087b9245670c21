/// How a PostgreSQL failure reaches callers of the store, by SQLSTATE.
extension PostgresFailure {
    /// 40001 serialization_failure, 40P01 deadlock_detected: the transaction lost a race
    /// and can be run again from the start.
    var isRetryable: Bool {
        !connectionLost && (sqlState == "40001" || sqlState == "40P01")
    }

    /// The connection is gone, or the server is shutting down, starting, or full, or a statement
    /// or lock wait ran past the session's time limit (57014, 55P03): the database is not
    /// answering in time, which callers treat like an outage.
    var meansUnavailable: Bool {
        guard !connectionLost else { return true }
        guard let sqlState else { return false }
        return sqlState.hasPrefix("08")  // connection_exception
            || ["57P01", "57P02", "57P03", "53300"].contains(sqlState)  // shutdown, crash, starting, too many connections
            || ["57014", "55P03"].contains(sqlState)  // statement_timeout, lock_timeout
    }

    /// What a caller of the store gets: a refusal as its own error, anything else as a `StoreError`.
    func thrownToCaller(scrub: (String) -> String) -> any Error {
        refusal ?? storeError(scrub: scrub)
    }

    /// `scrub` removes anything secret (the password) the message might repeat.
    func storeError(scrub: (String) -> String = { $0 }) -> StoreError {
        let shown = scrub(message)
        if meansUnavailable {
            return .unavailable(shown)
        }
        if let sqlState, sqlState.hasPrefix("23") {  // integrity_constraint_violation
            return .conflict(shown)
        }
        return .database(sqlState.map { "\(shown) (SQLSTATE \($0))" } ?? shown)
    }
}
