import AppleID
import BridgeSettings
import Foundation
import HTTPServer
import Logging
import Storage

/// Everything `serve` and `dev` start: store, application, listener, and a sweeper for expired rows.
public final class BridgeServer {
    public let app: ComposedService
    public let http: MicroHTTPDListener
    /// The same responder and listener settings without a socket: route tests send their requests through it.
    public let inProcess: InProcessClient
    private let sweeper: Thread

    public init(configuration: BridgeConfiguration, resourcesDirectory: String,
                transport: any AppleHTTPTransport = URLSessionTransport(), clock: WallClock = .system,
                logger: Logger = Logger(), server: ServerConfiguration? = nil, signInRequestsPerMinute: Int = 600) throws {
        app = try CompositionRoot.compose(configuration: configuration, resourcesDirectory: resourcesDirectory,
                                          transport: transport, clock: clock, logger: logger,
                                          signInRequestsPerMinute: signInRequestsPerMinute)
        let (store, clientAddresses) = (app.store, app.clientAddresses)
        var listener = server ?? ServerConfiguration()
        listener.host = app.configuration.host
        listener.port = app.configuration.port
        // The listener's per-client cap counts clients behind the proxies BRIDGE_TRUSTED_PROXIES names.
        listener.trustsForwardedFor = { clientAddresses.isTrustedProxy($0) }
        // Asked only for a peer `trustsForwardedFor` accepted.
        listener.forwardedClientKey = { clientAddresses.limitKey(trustedPeer: $0, forwardedFor: $1) }
        listener.requestCompleted = { [routes = app.routes] path, _, seconds in routes.recordRequest(path: path, seconds: seconds) }
        if listener.threadPoolSize <= 0 {
            listener.threadPoolSize = ServerConfiguration.defaultListenerThreads(
                cores: ProcessInfo.processInfo.activeProcessorCount,
                readsWaitOnAnotherProcess: store.readsWaitOnAnotherProcess)
        }
        let responder = app.routes.makeResponder()
        http = MicroHTTPDListener(configuration: listener, responder: responder, logger: logger,
                                  refusal: app.routes.refusalResponse)
        inProcess = InProcessClient(configuration: listener, responder: responder, logger: logger,
                                    refusal: app.routes.refusalResponse)
        sweeper = Self.makeSweeper(store: store, app: app, clock: clock)
    }

    /// How often each instance looks for housekeeping to do.
    package static let sweepInterval: TimeInterval = 30

    /// Housekeeping: expired rows and idle rate-limit buckets, by whichever instance holds the sweeper's lease (it
    /// renews it every round, so another takes over within 1.5 rounds if that instance stops); and Apple revocations
    /// that failed before (retried with backoff), which every instance claims from the shared queue item by item.
    private static func makeSweeper(store: any Store, app: ComposedService, clock: WallClock) -> Thread {
        let holder = UUID().uuidString
        return Thread {
            while !Thread.current.isCancelled {
                Thread.sleep(forTimeInterval: sweepInterval)
                let now = clock.now
                let leaseUntil = now.addingTimeInterval(sweepInterval * 1.5)
                let holdsLease = (try? store.write {
                    try $0.acquireLease(name: "sweeper", holder: holder, now: now, until: leaseUntil)
                }) ?? false
                if holdsLease {
                    _ = try? store.write { try $0.deleteExpired(now: now) + $0.deleteIdleRateLimits(now: now) }
                }
                app.processDueRevocations()
            }
        }
    }

    /// `listening: false` starts everything but the listener, for requests made through `inProcess` only.
    public func start(listening: Bool = true) throws {
        app.revocationBacklog.refresh()  // counted again after each pass of the queue
        if listening { try http.start() }
        sweeper.start()
        app.webhookDelivery?.start()
        // Warm Apple's keys so the first sign-in does not wait; a failure here is retried on demand.
        DispatchQueue.global().async { [app] in app.keys.prefetch() }
    }

    /// See `MicroHTTPDListener.shutdown(quiescing:)`.
    public func shutdown(quiescing: Bool = true) {
        sweeper.cancel()
        app.webhookDelivery?.stop()
        http.shutdown(quiescing: quiescing)
    }
}
