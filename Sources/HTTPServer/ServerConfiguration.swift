/// Limits and addresses of one HTTP listener.
public struct ServerConfiguration: Sendable {
    public var host: String
    /// 0 picks a free port; read it back from `MicroHTTPDListener.port`.
    public var port: Int
    /// Listener threads; 0 picks `defaultListenerThreads(cores:readsWaitOnAnotherProcess:)` for a server whose reads
    /// wait on another process.
    public var threadPoolSize: Int
    public var connectionLimit: Int
    public var perIPConnectionLimit: Int
    /// Seconds a connection may stay idle (slowloris guard).
    public var idleTimeoutSeconds: Int
    public var maxBodySize: Int
    /// Bytes per connection for headers and buffers; headers larger than this are refused by libmicrohttpd.
    /// libmicrohttpd zeroes this memory before every request on a connection, so it is kept at its default.
    public var connectionMemoryLimit: Int
    /// How long a graceful shutdown waits for in-flight requests.
    public var shutdownGraceSeconds: Double
    /// Worker threads for the part of a reply that may wait (`Reply.offListener`, e.g. a call to Apple),
    /// and how many more such requests may wait for one; beyond both, 503 with `Retry-After` at once.
    public var offListenerWorkers = 64
    public var offListenerQueue = 64
    /// Deadlines for receiving a request's headers (counted from the connection's start or the end of the
    /// previous request on it) and its body (from the end of the headers); the connection is closed when one
    /// passes, however slowly bytes keep arriving. 0 or less turns both off.
    public var headerTimeoutSeconds: Double = 10
    public var bodyTimeoutSeconds: Double = 30
    /// Requests one client behind a trusted proxy (the address it appended to X-Forwarded-For) may have in
    /// flight at once; more get 429. Direct clients are capped by `perIPConnectionLimit`. 0 turns the cap off.
    public var perClientRequestLimit = 256
    /// Whose X-Forwarded-For is believed (the peer's numeric address); loopback by default.
    public var trustsForwardedFor: @Sendable (String) -> Bool = ServerConfiguration.isLoopback
    /// The key `perClientRequestLimit` counts a request from a trusted proxy under, from the peer's address and the
    /// request's X-Forwarded-For fields: by default the last entry the proxy appended. An application with limits
    /// of its own passes the key they count under, so that both limits see the same client.
    public var forwardedClientKey: @Sendable (_ peer: String, _ forwardedFor: [String]) -> String = { peer, fields in
        Request.forwardedClient(peer: peer, lastField: fields.last)
    }

    /// Told of every request when it has been answered (or its connection ended): its path, status (0 when none
    /// was sent) and seconds from its arrival. Runs on a listener thread: keep it quick. For metrics.
    public var requestCompleted: (@Sendable (_ path: String, _ status: Int, _ seconds: Double) -> Void)?

    public static func isLoopback(_ address: String) -> Bool { address.hasPrefix("127.") || address == "::1" }

    /// Listener threads for `cores` cores (at least 4, at most 256): four per core when a read waits on another
    /// process (a round trip to PostgreSQL, made on the listener thread), two per core when it does not (SQLite,
    /// read in this process). A listener thread no longer waits for a group commit (sign-ins, sign-outs, `/login`,
    /// nonces and refreshes suspend their connection until it is durable), so few threads keep both cores busy,
    /// and few threads wake less often: on 2 cores, 8 threads gave `GET /healthz` 92 % of the plain-C reference
    /// where 32 gave 64 %. With SQLite the one writer thread shares the cores with every listener thread that
    /// has work, and 4 instead of 8 left it more of them: in six pairs of runs taken in turns at 256 connections,
    /// sign-ins' p99 fell from a median 43 to 39 ms and their CPU from 134 to 125 µs (README, "Benchmarks").
    /// The spare ones cover the rarer writes that still wait (account deletion, the OpenID provider's
    /// authorization, userinfo and revocation, Apple's notifications).
    public static func defaultListenerThreads(cores: Int, readsWaitOnAnotherProcess: Bool = true) -> Int {
        min(256, max(4, cores * (readsWaitOnAnotherProcess ? 4 : 2)))
    }

    /// The `Retry-After` of a 503 because the server is busy or stopping.
    public var busyRetryAfterSeconds = 5

    public init(host: String = "127.0.0.1", port: Int = 8080, threadPoolSize: Int = 0, connectionLimit: Int = 4096,
                perIPConnectionLimit: Int = 1024, idleTimeoutSeconds: Int = 30, maxBodySize: Int = 64 * 1024,
                connectionMemoryLimit: Int = 32 * 1024, shutdownGraceSeconds: Double = 10) {
        self.host = host
        self.port = port
        self.threadPoolSize = threadPoolSize
        self.connectionLimit = connectionLimit
        self.perIPConnectionLimit = perIPConnectionLimit
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.maxBodySize = maxBodySize
        self.connectionMemoryLimit = connectionMemoryLimit
        self.shutdownGraceSeconds = shutdownGraceSeconds
    }
}
