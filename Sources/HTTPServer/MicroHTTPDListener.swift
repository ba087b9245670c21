import Logging
import CMicroHTTPD
import CMicroHTTPDShims
import Foundation
import Locking
import Synchronization

/// The HTTP listener: the only code in the project that touches libmicrohttpd.
/// libmicrohttpd calls the access handler several times per request: first with headers only (we allocate a
/// `PendingRequest` into `*req_cls`), then once per body chunk, then with size 0 (we answer).
public final class MicroHTTPDListener: Sendable {
    public enum StartError: Error, CustomStringConvertible {
        case cannotListen(host: String, port: Int)
        public var description: String {
            switch self {
            case let .cannotListen(host, port):
                "cannot listen on \(host):\(port) (address in use, not a numeric IP address, or not allowed)"
            }
        }
    }

    let context: ServerContext
    private let daemon: Lock<DaemonHandle?> = Lock(nil)
    private let boundPort = Atomic<Int>(0)
    public let configuration: ServerConfiguration

    /// What the listener answers on its own, before any responder runs (413 for an oversized body).
    public typealias Refusal = @Sendable (_ path: String, _ status: Int, _ message: String) -> Response

    public static let plainRefusal: Refusal = { _, status, message in .text(message + "\n", status: status) }

    public init(configuration: ServerConfiguration, responder: some HTTPResponder, logger: Logger,
                refusal: @escaping Refusal = MicroHTTPDListener.plainRefusal) {
        self.configuration = configuration
        self.context = ServerContext(configuration: configuration, responder: responder, logger: logger, refusal: refusal)
    }

    /// The port actually listened on.
    public var port: Int { boundPort.load(ordering: .relaxed) }

    public func start() throws {
        let threads = configuration.threadPoolSize > 0
            ? configuration.threadPoolSize : ServerConfiguration.defaultListenerThreads(cores: ProcessInfo.processInfo.activeProcessorCount)
        // Room for every connection, and for the files and sockets besides them (databases, log, outgoing calls).
        FileDescriptorTable.reserve(configuration.connectionLimit + 256)
        let started: OpaquePointer? = configuration.host.withCString { host in
            var settings = bridge_mhd_settings(
                host: host, port: UInt16(clamping: configuration.port), thread_pool_size: UInt32(threads),
                connection_limit: UInt32(configuration.connectionLimit),
                per_ip_connection_limit: UInt32(configuration.perIPConnectionLimit),
                connection_timeout_seconds: UInt32(configuration.idleTimeoutSeconds),
                connection_memory_limit: configuration.connectionMemoryLimit,
                notify_connection: context.deadlines == nil ? nil : MicroHTTPDCallbacks.connection,
                notify_connection_context: Unmanaged.passUnretained(context).toOpaque())
            let contextPointer = Unmanaged.passUnretained(context).toOpaque()
            return bridge_mhd_start(&settings, MicroHTTPDCallbacks.access, contextPointer,
                                    MicroHTTPDCallbacks.completed, contextPointer)
        }
        guard let started else { throw StartError.cannotListen(host: configuration.host, port: configuration.port) }
        daemon.withLock { $0 = DaemonHandle(pointer: started) }
        context.deadlines?.startReaper()
        boundPort.store(Int(bridge_mhd_bound_port(started)), ordering: .relaxed)
    }

    /// Stops accepting connections, lets in-flight requests finish (up to the grace period), then stops.
    ///
    /// `quiescing: false` leaves the listening socket open until the end instead of closing it first. Test harnesses
    /// that start and stop servers by the hundred pass it: libmicrohttpd 0.9.75's `MHD_quiesce_daemon`, with epoll
    /// and a thread pool, races its own worker threads over the listening socket and can abort the process
    /// ("Failed to remove listen FD from epoll set", an open defect: both sides remove the socket from the epoll
    /// set, and the loser panics). It took down a whole test run once in about a dozen.
    public func shutdown(quiescing: Bool = true) {
        guard let running = daemon.withLock({ current -> OpaquePointer? in
            defer { current = nil }
            return current?.pointer
        }) else { return }
        if quiescing {
            let listener = MHD_quiesce_daemon(running)
            if listener >= 0 { close(listener) }
        }
        let deadline = Date().addingTimeInterval(configuration.shutdownGraceSeconds)
        while context.inFlight.load(ordering: .acquiring) > 0 && Date() < deadline {
            usleep(5_000)
        }
        // Requests still waiting for a worker get a 503; libmicrohttpd must not stop with a suspended connection.
        context.suspended.resumeAll(with: context.busy("/"))
        context.offListener.stop()
        let answered = Date().addingTimeInterval(1)
        while context.inFlight.load(ordering: .acquiring) > 0 && Date() < answered {
            usleep(5_000)
        }
        MHD_stop_daemon(running)
        context.deadlines?.stop()
    }

    public var inFlightRequests: Int { context.inFlight.load(ordering: .relaxed) }

    /// Requests running on, or waiting for, an off-listener worker.
    var offListenerRequests: Int { context.offListener.occupied }

    deinit { shutdown() }
}

/// The daemon pointer; libmicrohttpd's daemon functions are safe to call from any thread.
struct DaemonHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// What the C callbacks need, reached through an unretained pointer that outlives the daemon.
final class ServerContext: Sendable {
    let responder: any HTTPResponder
    let logger: Logger
    let maxBodySize: Int
    /// How much of an oversized body is read and discarded before answering 413 mid-upload.
    let drainLimit: Int
    let inFlight = Atomic<Int>(0)
    let refusal: MicroHTTPDListener.Refusal
    let offListener: OffListenerPool
    let suspended = SuspendedRequests()
    let busyRetryAfterSeconds: Int
    let deadlines: ConnectionDeadlines?
    let clientLimiter: ClientRequestLimiter
    let trustsForwardedFor: @Sendable (String) -> Bool
    let forwardedClientKey: @Sendable (String, [String]) -> String
    let requestCompleted: (@Sendable (String, Int, Double) -> Void)?

    init(configuration: ServerConfiguration, responder: any HTTPResponder, logger: Logger,
         refusal: @escaping MicroHTTPDListener.Refusal) {
        self.refusal = refusal
        self.responder = responder
        self.logger = logger
        self.maxBodySize = configuration.maxBodySize
        self.drainLimit = max(1 << 20, configuration.maxBodySize * 16)
        self.offListener = OffListenerPool(maxWorkers: configuration.offListenerWorkers,
                                           maxQueued: configuration.offListenerQueue)
        self.busyRetryAfterSeconds = configuration.busyRetryAfterSeconds
        self.deadlines = configuration.headerTimeoutSeconds > 0 && configuration.bodyTimeoutSeconds > 0
            ? ConnectionDeadlines(headerTimeoutSeconds: configuration.headerTimeoutSeconds,
                                  bodyTimeoutSeconds: configuration.bodyTimeoutSeconds, logger: logger)
            : nil
        self.clientLimiter = ClientRequestLimiter(limit: configuration.perClientRequestLimit)
        self.trustsForwardedFor = configuration.trustsForwardedFor
        self.forwardedClientKey = configuration.forwardedClientKey
        self.requestCompleted = configuration.requestCompleted
    }

    /// The answer when no worker is free for a request that must leave the listener, or the server is stopping.
    func busy(_ path: String) -> Response {
        var response = refusal(path, 503, "The server is busy. Please try again in a few seconds.")
        response.headers.set("Retry-After", String(busyRetryAfterSeconds))
        return response
    }
}

/// Per-request state between the access handler's calls; owned by libmicrohttpd's `*req_cls`.
final class PendingRequest {
    let method: String
    let path: String
    var query = FormFields()
    var headers = HTTPHeaders()
    var body: [UInt8] = []
    var received = 0
    var remoteAddress = ""
    var status = 0
    var answered = false
    /// Set while the request is suspended (for an off-listener worker, or work elsewhere) or resumed from it.
    var parked: ParkedRequest?
    /// The connection's deadlines, when they are on.
    var tracked: TrackedConnection?
    /// The client counted against the per-client cap, released when the request completes.
    var countedClient: String?
    var peerIsTrustedProxy = false
    /// What the head's fields say about its framing, Host and names, gathered as they are collected.
    var head: RequestHead
    let started = ConnectionDeadlines.now()

    init(method: String, path: String, isHTTP11: Bool) {
        self.method = method
        self.path = path
        head = RequestHead(isHTTP11: isHTTP11)
    }
}

enum MicroHTTPDCallbacks {
    static let access: MHD_AccessHandlerCallback = { cls, connection, url, method, version, uploadData, uploadDataSize, requestSlot in
        guard let cls, let connection, let requestSlot, let uploadDataSize else { return .NO }
        let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()

        // The URI log callback leaves a marker in the slot for a path with an encoded NUL (see the shims).
        let nulInPath = requestSlot.pointee == bridge_mhd_nul_in_path_marker()
        guard let existing = requestSlot.pointee, !nulInPath else {
            let pending = PendingRequest(method: method.map { String(cString: $0) } ?? "GET",
                                         path: RequestHead.path(ofTarget: url.map { String(cString: $0) } ?? "/"),
                                         isHTTP11: version.map { strcmp($0, "HTTP/1.1") == 0 } ?? false)
            collectHeaders(connection, into: pending)
            if nulInPath { pending.head.refuseEncodedNULInPath() }
            if bridge_mhd_has_folded_header(connection) != 0 { pending.head.refuseFoldedLine() }
            requestSlot.pointee = Unmanaged.passRetained(pending).toOpaque()
            // Counted once its client has been admitted or refused, so that a request seen in flight is one the
            // per-client cap already counts. The completion that uncounts it runs only after this call returns.
            defer { context.inFlight.add(1, ordering: .relaxed) }
            return headersReceived(connection, pending, context)
        }
        let pending = Unmanaged<PendingRequest>.fromOpaque(existing).takeUnretainedValue()

        if uploadDataSize.pointee > 0 {
            let size = uploadDataSize.pointee
            uploadDataSize.pointee = 0
            if pending.answered { return .YES }
            pending.received += size
            if pending.received > context.maxBodySize {
                // Keep reading (and discarding) a moderately oversized body so the client is not reset before
                // it reads the 413; beyond the drain limit, answer at once and let the connection close.
                pending.body = []
                if pending.received > context.drainLimit { return answer(connection, pending, tooLarge(pending, context)) }
                return .YES
            }
            if let uploadData {
                pending.body.append(contentsOf: UnsafeRawBufferPointer(start: uploadData, count: size))
            }
            return .YES
        }
        if pending.answered { return .YES }
        if let parked = pending.parked {
            // Resumed: the worker or the suspended request's work stored the outcome before resuming.
            pending.parked = nil
            return resume(parked, connection, pending, context)
        }
        if pending.received > context.maxBodySize { return answer(connection, pending, tooLarge(pending, context)) }

        var request = Request(method: pending.method, path: pending.path, query: pending.query,
                              headers: pending.headers, body: pending.body, remoteAddress: pending.remoteAddress)
        request.peerIsTrustedProxy = pending.peerIsTrustedProxy
        pending.body = []
        if let tracked = pending.tracked { context.deadlines?.responding(tracked) }
        return act(on: context.responder.respond(to: request), connection, pending, context)
    }

    /// Answers now, moves the rest off the listener, or suspends the connection while work elsewhere finishes, as
    /// the reply says.
    static func act(on reply: Reply, _ connection: OpaquePointer, _ pending: PendingRequest,
                    _ context: ServerContext) -> MHD_Result {
        switch reply.step {
        case let .answer(response):
            return answer(connection, pending, response)
        case let .failure(error):
            return answer(connection, pending, failureResponse(error, path: pending.path, context.logger))
        case let .offListener(work):
            return moveOffListener(work, connection, pending, context)
        case let .awaiting(start, then):
            let parked = ParkedRequest(connection: connection, then: then)
            let suspended = context.suspended
            // The work may call back before the connection is suspended: `park` then answers at once.
            start { rest in suspended.finish(parked, with: .rest(rest)) }
            return park(parked, connection, pending, context)
        }
    }

    /// Suspends the connection until the work calls back, or a worker answers.
    static func park(_ parked: ParkedRequest, _ connection: OpaquePointer, _ pending: PendingRequest,
                     _ context: ServerContext) -> MHD_Result {
        switch context.suspended.park(parked) {
        case .suspended:
            pending.parked = parked
            return .YES
        case .alreadyFinished:
            return resume(parked, connection, pending, context)
        case .refused:
            return answer(connection, pending, context.busy(pending.path))
        }
    }

    /// Answers a request whose outcome is in: a worker's response, or the rest of the reply, run here with the
    /// middleware's transforms (it may wait for work elsewhere once more, or continue off the listener).
    static func resume(_ parked: ParkedRequest, _ connection: OpaquePointer, _ pending: PendingRequest,
                       _ context: ServerContext) -> MHD_Result {
        switch parked.outcome {
        case let .response(response)?:
            return answer(connection, pending, response)
        case nil:
            return answer(connection, pending, context.busy(pending.path))
        case let .rest(rest)?:
            guard let then = parked.then else { return answer(connection, pending, internalError) }
            return act(on: then(rest), connection, pending, context)
        }
    }

    /// The first call for a request: headers are in. Refuses what must not be read further, else awaits the body.
    static func headersReceived(_ connection: OpaquePointer, _ pending: PendingRequest,
                                _ context: ServerContext) -> MHD_Result {
        if let deadlines = context.deadlines,
           let socketContext = bridge_mhd_socket_context(connection) {
            let tracked = Unmanaged<TrackedConnection>.fromOpaque(socketContext).takeUnretainedValue()
            pending.tracked = tracked
            deadlines.awaitBody(tracked)
        }
        // Trust matters only for X-Forwarded-For; without one the client is the peer either way.
        pending.peerIsTrustedProxy = pending.headers.contains("X-Forwarded-For")
            && context.trustsForwardedFor(pending.remoteAddress)
        if let (status, problem, closing) = pending.head.problem() {
            var refused = context.refusal(pending.path, status, problem)
            if closing { refused.headers.set("Connection", "close") }
            return answer(connection, pending, refused)
        }
        // Too large to read at all; or too large, and the client waits for a 100 Continue before sending it: the
        // 413 goes out now instead of the 100 (RFC 9110, 10.1.1), and no body follows on the connection.
        if let length = pending.headers["Content-Length"].flatMap({ Int($0) }), length > context.maxBodySize,
           length > context.drainLimit
            || pending.headers["Expect"].map({ $0.lowercased() == "100-continue" }) == true {
            return answer(connection, pending, tooLarge(pending, context))
        }
        // A direct client's connections are capped by libmicrohttpd's per-IP limit (and it has at most one
        // request in flight per connection); only clients behind a trusted proxy need counting here.
        if context.clientLimiter.isEnabled && pending.peerIsTrustedProxy {
            let client = context.forwardedClientKey(pending.remoteAddress, pending.headers.values("X-Forwarded-For"))
            guard context.clientLimiter.admit(client) else {
                var refused = context.refusal(pending.path, 429, "Too many requests from your address at once.")
                refused.headers.set("Retry-After", "1")
                return answer(connection, pending, refused)
            }
            pending.countedClient = client
        }
        return .YES
    }

    /// Suspends the connection and runs the rest of the reply on a worker, where it may wait; 503 at once when no
    /// worker is free.
    static func moveOffListener(_ work: @escaping @Sendable () -> Reply, _ connection: OpaquePointer,
                                _ pending: PendingRequest, _ context: ServerContext) -> MHD_Result {
        guard context.offListener.reserve() else { return answer(connection, pending, context.busy(pending.path)) }
        let parked = ParkedRequest(connection: connection, then: nil)
        guard context.suspended.park(parked) == .suspended else {
            context.offListener.cancelReservation()
            return answer(connection, pending, context.busy(pending.path))
        }
        pending.parked = parked
        let path = pending.path
        context.offListener.run {
            let response: Response
            do {
                response = try work().wait()
            } catch {
                response = failureResponse(error, path: path, context.logger)
            }
            context.suspended.finish(parked, with: .response(response))
        }
        return .YES
    }

    /// Tracks each connection from accept to close for the header and body deadlines.
    static let connection: MHD_NotifyConnectionCallback = { cls, connection, socketContext, event in
        guard let cls, let socketContext,
              let deadlines = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue().deadlines else { return }
        if event == .CONNECTION_NOTIFY_STARTED, let connection {
            let tracked = deadlines.opened(socket: bridge_mhd_connection_socket(connection))
            socketContext.pointee = Unmanaged.passRetained(tracked).toOpaque()
        } else if event == .CONNECTION_NOTIFY_CLOSED, let existing = socketContext.pointee {
            socketContext.pointee = nil
            deadlines.closed(Unmanaged<TrackedConnection>.fromOpaque(existing).takeRetainedValue())
        }
    }

    static let completed: MHD_RequestCompletedCallback = { cls, _, requestSlot, termination in
        guard let cls, let requestSlot, let existing = requestSlot.pointee,
              existing != bridge_mhd_nul_in_path_marker() else { return }
        requestSlot.pointee = nil
        let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
        let pending = Unmanaged<PendingRequest>.fromOpaque(existing).takeRetainedValue()
        context.inFlight.subtract(1, ordering: .releasing)
        if let client = pending.countedClient { context.clientLimiter.release(client) }
        let now = ConnectionDeadlines.now()
        if let tracked = pending.tracked { context.deadlines?.awaitNextRequest(tracked, now: now) }
        context.logger.request(method: pending.method, path: pending.path, status: pending.status,
                               microseconds: (now &- pending.started) / 1000,
                               aborted: termination == .REQUEST_TERMINATED_COMPLETED_OK ? nil : Int(termination.rawValue))
        context.requestCompleted?(pending.path, pending.status, Double(now &- pending.started) / 1e9)
    }

    static let internalError = Response.text("The server could not answer this request.\n", status: 500)

    /// The answer to a failure no middleware presented: an `HTTPError` with its status, anything else 500.
    static func failureResponse(_ error: any Error, path: String, _ logger: Logger) -> Response {
        if let error = error as? HTTPError { return error.plainTextResponse }
        logger.error("unhandled_error", ["path": path, "error": String(describing: type(of: error))])
        return internalError
    }

    static func tooLarge(_ pending: PendingRequest, _ context: ServerContext) -> Response {
        context.refusal(pending.path, 413, "The request body is larger than \(context.maxBodySize) bytes.")
    }

    static func answer(_ connection: OpaquePointer, _ pending: PendingRequest, _ response: Response) -> MHD_Result {
        pending.answered = true
        pending.status = response.status
        if let tracked = pending.tracked { tracked.deadline.store(0, ordering: .relaxed) }
        let mhdResponse = response.body.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress),
                                            .RESPMEM_MUST_COPY)
        }
        guard let mhdResponse else { return .NO }
        defer { MHD_destroy_response(mhdResponse) }
        for field in response.headers where !HTTPHeaders.sameName(field.name, "Content-Length") {
            // withCString lends a native String's own NUL-terminated storage; passing the Strings as pointers
            // directly built a copy of each (utf8CString) for every header of every response.
            field.name.withCString { name in
                field.value.withCString { value in _ = MHD_add_response_header(mhdResponse, name, value) }
            }
        }
        return MHD_queue_response(connection, UInt32(response.status), mhdResponse)
    }

    static func collectHeaders(_ connection: OpaquePointer, into pending: PendingRequest) {
        let target = Unmanaged.passUnretained(pending).toOpaque()
        MHD_get_connection_values(connection, .HEADER_KIND, { cls, _, key, value in
            guard let cls, let key else { return .YES }
            let pending = Unmanaged<PendingRequest>.fromOpaque(cls).takeUnretainedValue()
            let name = UnsafeBufferPointer(start: UnsafeRawPointer(key).assumingMemoryBound(to: UInt8.self), count: strlen(key))
            let text = value.map { String(cString: $0) } ?? ""
            pending.head.add(name: name, value: text)
            pending.headers.add(String(decoding: name, as: UTF8.self), text)
            return .YES
        }, target)
        // With their lengths: a query value may hold an encoded NUL (`%00`), which a C string would cut off there,
        // so that `redirect_uri=…%00` read as the registered URI.
        MHD_get_connection_values_n(connection, .GET_ARGUMENT_KIND, { cls, _, key, keySize, value, valueSize in
            guard let cls, let key else { return .YES }
            let pending = Unmanaged<PendingRequest>.fromOpaque(cls).takeUnretainedValue()
            let name = String(decoding: UnsafeRawBufferPointer(start: key, count: keySize), as: UTF8.self)
            let text = value.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: valueSize), as: UTF8.self) }
            pending.query.append(name, text ?? "")
            return .YES
        }, target)
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { address in
            if bridge_mhd_client_address(connection, address.baseAddress!, address.count) == 0 {
                pending.remoteAddress = String(cString: address.baseAddress!)
            }
        }
    }
}
