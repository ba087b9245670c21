import Logging
import Foundation
import Locking
import Synchronization

/// One open connection as the deadline reaper sees it: its socket and when its current phase must end.
final class TrackedConnection: Sendable {
    let socket: Int32
    /// Monotonic nanoseconds by which the current phase must be over; 0 while the server itself is busy
    /// with the request (responding, or suspended for a worker), when no deadline applies.
    let deadline = Atomic<UInt64>(0)
    /// Which phase the deadline belongs to, for the log.
    let phase = Atomic<Int>(Phase.headers.rawValue)

    enum Phase: Int {
        /// The connection's first request: its headers (or a connection opened and never used, as browsers'
        /// speculative preconnects are).
        case headers
        /// A request's body, after its headers.
        case body
        /// The next request on a kept-alive connection whose previous one was answered: routine for a browser,
        /// a proxy keeping idle connections longer than the server does when it is one.
        case idle

        var name: String {
            switch self {
            case .headers: "headers"
            case .body: "body"
            case .idle: "idle"
            }
        }
    }

    init(socket: Int32) { self.socket = socket }
}

/// Deadlines for receiving a request's headers and its body. libmicrohttpd's own timeout counts only idle
/// time, so a client trickling one byte every few seconds would keep a connection forever; here a reaper
/// thread shuts down the socket of any connection whose phase ran late, however many bytes still arrive.
final class ConnectionDeadlines: Sendable {
    private let headerTimeout: UInt64
    private let bodyTimeout: UInt64
    private let interval: Double
    /// Connections by identity. The reaper shuts a socket down only while holding this lock and only if the
    /// connection is still here; libmicrohttpd reports a close (and we remove it) before it closes the socket,
    /// so the reaper can never hit a reused descriptor.
    private let connections = Lock<[ObjectIdentifier: TrackedConnection]>([:])
    private let stopped = Atomic<Bool>(false)
    private let logger: Logger

    init(headerTimeoutSeconds: Double, bodyTimeoutSeconds: Double, logger: Logger) {
        headerTimeout = UInt64(max(0.001, headerTimeoutSeconds) * 1e9)
        bodyTimeout = UInt64(max(0.001, bodyTimeoutSeconds) * 1e9)
        interval = min(1, max(0.02, min(headerTimeoutSeconds, bodyTimeoutSeconds) / 10))
        self.logger = logger
    }

    /// Monotonic nanoseconds. `clock_gettime` directly: `DispatchTime.now()` costs several times more, and a
    /// request reads the clock four times.
    static func now() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }

    func opened(socket: Int32) -> TrackedConnection {
        let connection = TrackedConnection(socket: socket)
        connection.deadline.store(Self.now() + headerTimeout, ordering: .relaxed)
        connections.withLock { $0[ObjectIdentifier(connection)] = connection }
        return connection
    }

    func closed(_ connection: TrackedConnection) {
        _ = connections.withLock { $0.removeValue(forKey: ObjectIdentifier(connection)) }
    }

    /// The previous request on the connection is answered: the next one's headers are due.
    func awaitNextRequest(_ connection: TrackedConnection, now: UInt64 = ConnectionDeadlines.now()) {
        connection.phase.store(TrackedConnection.Phase.idle.rawValue, ordering: .relaxed)
        connection.deadline.store(now + headerTimeout, ordering: .relaxed)
    }

    /// Headers are in: the body (if any) is due.
    func awaitBody(_ connection: TrackedConnection) {
        connection.phase.store(TrackedConnection.Phase.body.rawValue, ordering: .relaxed)
        connection.deadline.store(Self.now() + bodyTimeout, ordering: .relaxed)
    }

    /// The request is complete; the server is answering it.
    func responding(_ connection: TrackedConnection) {
        connection.deadline.store(0, ordering: .relaxed)
    }

    func startReaper() {
        let thread = Thread { [self] in
            while !stopped.load(ordering: .relaxed) {
                Thread.sleep(forTimeInterval: interval)
                reap(now: Self.now())
            }
        }
        thread.name = "deadline-reaper"
        thread.start()
    }

    func stop() { stopped.store(true, ordering: .relaxed) }

    /// Shuts down every connection whose phase is past its deadline; libmicrohttpd then sees the socket
    /// closed and cleans the connection up on its own thread.
    func reap(now: UInt64) {
        var late: [TrackedConnection.Phase] = []
        connections.withLock { connections in
            for connection in connections.values {
                let deadline = connection.deadline.load(ordering: .relaxed)
                guard deadline != 0 && deadline < now else { continue }
                connection.deadline.store(0, ordering: .relaxed)
                // Read before the shutdown: the listener thread may see the socket closed at once and end the
                // request (which starts the next phase) before this thread would read it after.
                late.append(TrackedConnection.Phase(rawValue: connection.phase.load(ordering: .relaxed)) ?? .headers)
                shutdown(connection.socket, Int32(SHUT_RDWR))
            }
        }
        for phase in late {
            logger.info("connection_deadline", ["phase": phase.name])
        }
    }
}

/// Caps the requests one client has in flight at once. The client is the address a trusted proxy appended to
/// X-Forwarded-For, so the cap holds behind a proxy, where libmicrohttpd's per-IP limit sees only the proxy.
/// Counts are split over shards, each with its own lock, so listener threads rarely wait on one another.
final class ClientRequestLimiter: Sendable {
    private final class Shard: Sendable {
        let counts = Lock<[String: Int]>([:])
    }

    private let limit: Int
    private let shards: [Shard] = (0..<32).map { _ in Shard() }

    init(limit: Int) { self.limit = limit }

    var isEnabled: Bool { limit > 0 }

    private func shard(_ client: String) -> Shard { shards[Int(UInt(bitPattern: client.hashValue) % 32)] }

    /// Counts one more request for `client`; false (and not counted) when it already has `limit` in flight.
    func admit(_ client: String) -> Bool {
        shard(client).counts.withLock { counts in
            let current = counts[client, default: 0]
            guard current < limit else { return false }
            counts[client] = current + 1
            return true
        }
    }

    func release(_ client: String) {
        shard(client).counts.withLock { counts in
            let remaining = counts[client, default: 1] - 1
            counts[client] = remaining > 0 ? remaining : nil
        }
    }
}
