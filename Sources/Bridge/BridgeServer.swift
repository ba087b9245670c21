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
                transport: any AppleHTTPTransport = URLSessionTransport(), clock: Clock = .system,
                logger: Logger = Logger(), server: ServerConfiguration? = nil, signInRequestsPerMinute: Int = 600) throws {
        var configuration = configuration
        if configuration.secretKey == nil {
            configuration.secretKey = try DevelopmentSecret.loadOrCreate(at: "data/dev-secret.key")
        }
        let store: any Store
        do {
            store = try StoreFactory.open(configuration.database, poolSize: configuration.databasePoolSize)
            let applied = try store.migrate()
            if !applied.isEmpty {
                logger.info("migrations_applied", ["versions": applied.map(String.init).joined(separator: ",")])
            }
        } catch {
            throw ConfigurationError("BRIDGE_DATABASE", "cannot be opened: \(error)")
        }
        app = try BridgeApp(configuration: configuration, store: store, resourcesDirectory: resourcesDirectory,
                            transport: transport, clock: clock, logger: logger, signInRequestsPerMinute: signInRequestsPerMinute)
        var listener = server ?? ServerConfiguration()
        listener.host = configuration.host
        listener.port = configuration.port
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
