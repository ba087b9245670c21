import AppleID
import Foundation
import HTTPServer
import Storage

/// The one place the service is put together: configuration → store → keys → verifier → application.
/// `serve` and `dev` take all of it (through `BridgeServer`); `doctor` and `verify-token` take the steps they need.
public enum CompositionRoot {
    /// The application, ready for a listener: secret key, store (migrated), Apple's services, routes.
    static func application(configuration: BridgeConfiguration, resourcesDirectory: String,
                            transport: any AppleHTTPTransport, clock: WallClock, logger: Logger,
                            signInRequestsPerMinute: Int) throws -> BridgeApp {
        var configuration = configuration
        if configuration.secretKey == nil {
            configuration.secretKey = try DevelopmentSecret.loadOrCreate(at: "data/dev-secret.key")
        }
        let store = try openStore(configuration, logger: logger)
        let apple = appleServices(configuration, clientKey: try clientKey(configuration), transport: transport,
                                  clock: clock, logger: logger, codeExchangeAttempts: 2)
        return try BridgeApp(configuration: configuration, store: store, apple: apple,
                             resourcesDirectory: resourcesDirectory, clock: clock, logger: logger,
                             signInRequestsPerMinute: signInRequestsPerMinute)
    }

    /// The configured store, with every migration applied.
    static func openStore(_ configuration: BridgeConfiguration, logger: Logger) throws(ConfigurationError) -> any Store {
        do {
            let store = try StoreFactory.open(configuration.database, poolSize: configuration.databasePoolSize)
            let applied = try store.migrate()
            if !applied.isEmpty {
                logger.info("migrations_applied", ["versions": applied.map(String.init).joined(separator: ",")])
            }
            return store
        } catch {
            throw ConfigurationError("BRIDGE_DATABASE", "cannot be opened: \(error)")
        }
    }

    /// The key that signs client secrets, or nil when APPLE_TEAM_ID, APPLE_KEY_ID and APPLE_PRIVATE_KEY_PATH are unset.
    public static func clientKey(_ configuration: BridgeConfiguration) throws(ConfigurationError) -> AppleClientKey? {
        guard let teamID = configuration.teamID, let keyID = configuration.keyID, let path = configuration.privateKeyPath else {
            return nil
        }
        do {
            return try AppleClientKey.load(teamID: teamID, keyID: keyID, path: path)
        } catch {
            throw ConfigurationError("APPLE_PRIVATE_KEY_PATH", error.description)
        }
    }

    /// Apple's keys, the verifiers and (with a client key) the token client. `codeExchangeAttempts` is low for the
    /// server, where a person waits on a sign-in: a down Apple should cost seconds, not most of a minute.
    public static func appleServices(_ configuration: BridgeConfiguration, clientKey: AppleClientKey?,
                                     transport: any AppleHTTPTransport, clock: WallClock = .system, logger: Logger? = nil,
                                     codeExchangeAttempts: Int = 3) -> AppleServices {
        var limits = AppleCallGuard.Settings()
        limits.maxInFlight = configuration.maxAppleCallsInFlight
        let callGuard = AppleCallGuard(settings: limits)
        let transport = GuardedTransport(transport, guard: callGuard, callTimeout: AppleServices.callTimeout)
        let keys = JWKSCache(url: configuration.appleIDURL + "/auth/keys", transport: transport, clock: clock) { event, detail in
            logger?.info(event, ["detail": detail])
        }
        let verifier = IdentityTokenVerifier(
            policy: VerificationPolicy(issuers: configuration.issuers, servicesID: configuration.servicesID,
                                       bundleIDs: configuration.bundleIDs),
            keys: keys, clock: clock)
        let notifications = NotificationVerifier(keys: keys, issuers: configuration.issuers,
                                                 clientIDs: configuration.clientIDs, clock: clock)
        let secrets = clientKey.map { ClientSecretProvider(key: $0, clock: clock) }
        let tokenClient = secrets.map {
            AppleTokenClient(baseURL: configuration.appleIDURL, transport: transport, secrets: $0, verifier: verifier,
                             attempts: codeExchangeAttempts, callGuard: callGuard)
        }
        return AppleServices(keys: keys, verifier: verifier, notifications: notifications, clientSecrets: secrets,
                             tokenClient: tokenClient, callGuard: callGuard)
    }
}
