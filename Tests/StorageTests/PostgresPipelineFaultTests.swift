import Foundation
import Testing
@testable import Storage

/// A server that ends the session between a pipeline's last answer and its sync point. PostgreSQL does that when it
/// is stopped (or the backend terminated) right then; libpq has read the FATAL but not yet the socket's close, so it
/// still calls the connection OK. CI once saw a store report that as an ordinary database error (a 500, not a 503),
/// and the connection could have gone back to the pool.
@Suite("PostgreSQL pipeline ended before its sync point", .serialized) struct PostgresPipelineFaultTests {
    @Test("a write whose statements were answered but whose session ended before the sync fails as unavailable, and the next write goes out on a new connection")
    func writeThroughStore() throws {
        let server = try ScriptedPostgresServer()
        defer { server.stop() }
        let store = try PostgresStore(url: try PostgresURL(server.url), poolSize: 1)
        try store.write { try $0.insertLoginAttempt(loginAttempt("before")) }
        #expect(server.connections == 1)

        server.endSessionAtNextPipelineSync()
        let failed = #expect(throws: StoreError.self) {
            try store.write { try $0.insertLoginAttempt(loginAttempt("ended")) }
        }
        guard case .unavailable? = failed else {
            Issue.record("expected unavailable (the COMMIT never went out), got \(String(describing: failed))")
            return
        }
        #expect(server.sessionsEnded == 1)

        try store.write { try $0.insertLoginAttempt(loginAttempt("after")) }
        #expect(server.connections == 2, "the connection whose session ended was lent again")
    }

    @Test("a COMMIT answered before the session ended has committed: the commit stands, and the connection is not used again")
    func commitAnsweredBeforeTheSync() throws {
        let server = try ScriptedPostgresServer()
        defer { server.stop() }
        let connection = try PostgresConnection(conninfo: server.conninfo, defaults: [:])
        func insertAndCommit() throws(PostgresFailure) {
            connection.begin("BEGIN")
            try connection.send("INSERT INTO t VALUES ($1)", [.integer(1)])
            try connection.commit()
        }
        try insertAndCommit()  // prepares BEGIN, the INSERT and COMMIT, so none of them waits the next time
        server.endSessionAtNextPipelineSync()
        try insertAndCommit()  // BEGIN, INSERT and COMMIT in one pipeline, each answered
        #expect(server.sessionsEnded == 1)
        #expect(!connection.isUsable)
        let next = #expect(throws: PostgresFailure.self) { try connection.run("SELECT 1") }
        #expect(next?.connectionLost == true && next?.meansUnavailable == true)
    }

    @Test("in a group commit, a session ended at a write's sync point rolls the batch back, and each write then commits alone on a new connection")
    func batchReplayedAlone() throws {
        let server = try ScriptedPostgresServer()
        defer { server.stop() }
        let store = try PostgresStore(url: try PostgresURL(server.url), poolSize: 2,
                                      batchLimits: .init(lanes: 1, maxWrites: 8))
        let running = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), answered = DispatchGroup()
        let outcomes = Collected<String>()
        answered.enter()
        store.write(isolation: .readCommitted, { tx in  // holds the one lane while the batch queues behind it
            try tx.insertLoginAttempt(loginAttempt("holder"))
            running.signal()
            release.wait()
        }, completion: { _ in answered.leave() })
        running.wait()
        for index in 0..<2 {
            answered.enter()
            store.write(isolation: .readCommitted, { tx in try tx.insertLoginAttempt(loginAttempt("batched\(index)")) },
                        completion: { outcome in
                            outcomes.append((try? outcome.get()) != nil ? "ok" : "failed: \(outcome)")
                            answered.leave()
                        })
        }
        while store.waitingWriteCount < 2 { usleep(1_000) }
        server.endSessionAtNextPipelineSync()  // the batch's first write: BEGIN, SET LOCAL and its INSERT
        release.signal()
        answered.wait()
        #expect(outcomes.all == ["ok", "ok"])
        #expect(server.sessionsEnded == 1)
        #expect(store.groupCommitCounts.replays == 1)
    }

    @Test("stopping the scripted server shuts down no socket but its own, even one that took the number of a session it closed")
    func stopTouchesOnlyItsOwnSockets() throws {
        let server = try ScriptedPostgresServer()
        do {
            let connection = try PostgresConnection(conninfo: server.conninfo, defaults: [:])
            try connection.execute("SELECT 1")
        }  // closed: the server's side of it closes too, and its descriptor number is free again
        #expect(waitUntil { server.openSessions == 0 })
        // The kernel hands out the lowest free number: one of these takes the one the session had.
        var pairs: [[Int32]] = []
        for _ in 0..<32 {
            var pair: [Int32] = [0, 0]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else { break }
            pairs.append(pair)
        }
        defer { pairs.joined().forEach { close($0) } }
        server.stop()
        let shutDown = pairs.filter { pair in
            var byte: UInt8 = 1
            return send(pair[0], &byte, 1, Int32(MSG_NOSIGNAL)) != 1 || recv(pair[1], &byte, 1, Int32(MSG_DONTWAIT)) != 1
        }
        #expect(pairs.count == 32)
        #expect(shutDown.isEmpty, "sockets shut down by the server's stop: \(shutDown)")
    }
}
