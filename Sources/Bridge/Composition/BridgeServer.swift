import AppleID
import Foundation
import HTTPServer
import Storage

/// Everything `serve` and `dev` start: store, application, listener, and a sweeper for expired rows.
public final class BridgeServer {
    public let app: BridgeApp
    public let http: HTTPServer
    private let sweeper: Thread

    public init(configuration: BridgeConfiguration, resourcesDirectory: String,
                transport: any AppleHTTPTransport = URLSessionTransport(), clock: WallClock = .system,
                logger: Logger = Logger(), server: ServerConfiguration? = nil, signInRequestsPerMinute: Int = 600) throws {
        app = try CompositionRoot.application(configuration: configuration, resourcesDirectory: resourcesDirectory,
                                              transport: transport, clock: clock, logger: logger,
                                              signInRequestsPerMinute: signInRequestsPerMinute)
        let store = app.store
        var listener = server ?? ServerConfiguration()
        listener.host = app.configuration.host
        listener.port = app.configuration.port
        // The listener's per-client cap counts clients behind the proxies BRIDGE_TRUSTED_PROXIES names.
        listener.trustsForwardedFor = app.isTrustedProxy
        http = HTTPServer(configuration: listener, responder: app.makeResponder(), logger: logger,
                          refusal: app.refusalResponse)
        // Housekeeping: expired rows, and Apple revocations that failed before (retried with backoff).
        sweeper = Thread { [store, app] in
            while !Thread.current.isCancelled {
                Thread.sleep(forTimeInterval: 30)
                _ = try? store.write { try $0.deleteExpired(now: clock.now) }
                app.processDueRevocations()
            }
        }
    }

    public func start() throws {
        try http.start()
        sweeper.start()
        // Warm Apple's keys so the first sign-in does not wait; a failure here is retried on demand.
        DispatchQueue.global().async { [app] in app.keys.prefetch() }
    }

    public func shutdown() {
        sweeper.cancel()
        http.shutdown()
    }
}
