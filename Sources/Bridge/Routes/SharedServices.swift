import AppleID
import HTTPServer
import Storage

/// What the route groups and endpoints are built from, gathered once while the application is put together.
struct SharedServices {
    let configuration: BridgeConfiguration
    let store: any Store
    let apple: AppleServices
    let secrets: ServerSecrets
    let clock: WallClock
    let logger: Logger
    let metrics: Metrics
    let pages: Pages
    let rateLimit: SignInRateLimit
    let providerKeys: ProviderKeyRing
    /// One for the application: it holds the queue of code exchanges to retry.
    let exchangeRetrier: CodeExchangeRetrier?

    var sessions: BrowserSessions { BrowserSessions(store: store, clock: clock, csrfKey: secrets.csrfKey,
                                                     cookieNames: configuration.cookieNames) }

    var accessTokens: AccessTokens {
        AccessTokens(keys: providerKeys, issuer: configuration.publicURL, lifetime: NativeAPI.accessTokenLifetime)
    }

    var returnDestination: ReturnDestination {
        ReturnDestination(key: secrets.returnDestinationKey, policy: configuration.site.returnURLs)
    }

    var vault: AppleTokenVault { AppleTokenVault(key: secrets.appleTokenKey) }

    var exchanger: CodeExchanger {
        CodeExchanger(client: apple.tokenClient, servicesID: configuration.servicesID, redirectURI: configuration.redirectURI,
                      isRequired: configuration.requireCodeExchange, metrics: metrics, logger: logger,
                      retrier: exchangeRetrier)
    }

    var sessionIssuer: SessionIssuer { SessionIssuer(metrics: metrics, logger: logger) }

    var signInService: SignInService {
        SignInService(store: store, clock: clock, vault: vault, exchanger: exchanger, sessionIssuer: sessionIssuer,
                      servicesID: configuration.servicesID,
                      replayLeeway: apple.verifier.policy.leeway, metrics: metrics, logger: logger)
    }

    var accountDeletion: AccountDeletion {
        AccountDeletion(store: store, clock: clock, vault: vault, appleTokens: apple.tokenClient, metrics: metrics, logger: logger)
    }
}
