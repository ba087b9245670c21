import Foundation
import OpenIDProvider
import Storage
import Webhooks

/// How the server was started. Development mode trusts the local Apple ID simulator and may generate a secret key.
public enum RunMode: String, Sendable {
    case production
    case development
}

/// Every setting of the service (the keys in `keys`, read from the environment or a config file), validated.
public struct BridgeConfiguration: Sendable {
    public var mode: RunMode
    public var host: String
    public var port: Int
    /// External base URL without a trailing slash.
    public var publicURL: String
    /// `BRIDGE_DATABASE`, parsed once; its description never shows a password.
    public var database: DatabaseURL
    /// `BRIDGE_DATABASE_POOL_SIZE`: most connections one instance opens to PostgreSQL.
    public var databasePoolSize: Int
    /// Nil only in development mode, until the composition root loads or creates the development secret.
    public var secretKey: [UInt8]?
    public var servicesID: String?
    public var bundleIDs: [String]
    public var teamID: String?
    public var keyID: String?
    public var privateKeyPath: String?
    public var appleIDURL: String
    public var issuers: [String]
    public var requireCodeExchange: Bool
    public var useJSSDK: Bool
    /// APPLE_JS_POPUP: Apple's JS SDK signs in in a popup and hands the result to the login page, which posts it to
    /// `/apple_redirect` itself (only with APPLE_JS_SDK).
    public var useJSPopup: Bool
    /// Refuse identity tokens without a `nonce` claim on every path (APPLE_REQUIRE_NONCE).
    public var requireNonce: Bool
    /// APPLE_ACCEPT_UNSENT_NONCE: a JSON-API token carrying a nonce the app made and did not send is accepted, as
    /// not nonce-verified (apps that hash a nonce into the request and forget it).
    public var acceptUnsentNonce: Bool
    /// APPLE_ANDROID_PACKAGES: the Android apps the `intent://` relay hands a sign-in to (see `androidRelayURL`).
    public var androidPackages: [String]
    /// Peers whose `X-Forwarded-For` is believed (BRIDGE_TRUSTED_PROXIES): reverse proxies in front of the service.
    package var trustedProxies: [AddressRange]
    /// The Bearer token `GET /metrics` requires (BRIDGE_METRICS_TOKEN); nil leaves it open.
    public var metricsToken: String?
    /// Origins whose JavaScript may call `/api/auth/*` and `/api/me` (BRIDGE_CORS_ORIGINS); empty: no CORS.
    public var corsOrigins: [String]
    /// The operator's brand and the destination after signing in.
    public var site: SiteSettings
    /// BRIDGE_CLIENTS_FILE, read and checked: the OpenID provider's clients.
    public var clients: ClientRegistry
    /// APPLE_MAX_CALLS_IN_FLIGHT: calls to Apple (code exchanges, revocations, key fetches) at once; beyond it a
    /// sign-in goes on without its code exchange, or gets 503, at once instead of waiting.
    public var maxAppleCallsInFlight: Int
    /// BRIDGE_COOKIE_DOMAIN: the domain the session cookie is sent to, so that a proxy in front of an application on
    /// a sibling host forwards it to `/auth/verify`; nil keeps it on this host only (`__Host-`).
    public var cookieDomain: String?
    /// BRIDGE_WEBHOOK_URL, BRIDGE_WEBHOOK_SECRET, BRIDGE_WEBHOOK_EVENTS; nil: no webhooks (docs/webhooks.md).
    public var webhooks: WebhookSettings?

    public var redirectURI: String { publicURL + "/apple_redirect" }

    /// Where the login page loads Apple's JS SDK from (`…/appleauth/static/jsapi/appleid/1/LOCALE/appleid.auth.js`
    /// below it): Apple's CDN, except in development against a stand-in for Apple (the local simulator), which
    /// serves its own SDK at the same path so the JS flows run offline.
    public var appleJSSDKBaseURL: String {
        mode == .development && appleIDURL != Self.appleIDURLDefault ? appleIDURL : "https://appleid.cdn-apple.com"
    }

    package static let appleIDURLDefault = "https://appleid.apple.com"

    /// Every client ID a token's `aud` may name.
    public var clientIDs: [String] { (servicesID.map { [$0] } ?? []) + bundleIDs }

    /// The public URL is https, so cookies marked Secure reach the server. Over plain http on loopback
    /// browsers still accept Secure cookies for localhost/127.0.0.1.
    public var isHTTPS: Bool { publicURL.hasPrefix("https://") }

    /// The cookie names: `__Host-` prefixed when the public URL is https (the session's `__Secure-` when it is
    /// scoped to BRIDGE_COOKIE_DOMAIN).


    public static let keys = [
        "BRIDGE_HOST", "BRIDGE_PORT", "BRIDGE_PUBLIC_URL", "BRIDGE_DATABASE", "BRIDGE_DATABASE_POOL_SIZE", "BRIDGE_SECRET_KEY",
        "APPLE_SERVICES_ID", "APPLE_BUNDLE_IDS", "APPLE_TEAM_ID", "APPLE_KEY_ID", "APPLE_PRIVATE_KEY_PATH",
        "APPLE_ID_URL", "APPLE_ISSUER", "APPLE_REQUIRE_CODE_EXCHANGE", "APPLE_JS_SDK",
        "APPLE_JS_POPUP", "APPLE_REQUIRE_NONCE", "APPLE_ACCEPT_UNSENT_NONCE", "BRIDGE_TRUSTED_PROXIES", "BRIDGE_METRICS_TOKEN",
        "BRIDGE_CORS_ORIGINS", "BRIDGE_CLIENTS_FILE", "APPLE_MAX_CALLS_IN_FLIGHT", "BRIDGE_COOKIE_DOMAIN",
        "APPLE_ANDROID_PACKAGES", "BRIDGE_WEBHOOK_URL", "BRIDGE_WEBHOOK_SECRET", "BRIDGE_WEBHOOK_EVENTS",
    ] + SiteSettings.keys

    /// Reads the settings: the environment first, then `configFile` (same keys, `KEY=value` lines) for keys the
    /// environment does not set. Unknown `BRIDGE_`/`APPLE_` keys in the file are refused, as they are usually typos.
    public static func load(environment: [String: String], configFile: String? = nil, mode: RunMode = .production,
                            defaults: [String: String] = [:]) throws(ConfigurationError) -> BridgeConfiguration {
        var values = defaults
        if let configFile {
            values.merge(try readConfigFile(configFile)) { _, file in file }
        }
        for key in keys {
            if let value = environment[key] { values[key] = value }
        }
        return try BridgeConfiguration(values: values, mode: mode)
    }

    public init(values: [String: String], mode: RunMode) throws(ConfigurationError) {
        let settings = Settings(values: values)
        self.mode = mode
        (host, port, publicURL) = try Self.listener(settings, mode: mode)
        (database, databasePoolSize) = try Self.database(settings)
        secretKey = try Self.secretKey(settings, mode: mode)
        (servicesID, bundleIDs) = try Self.clientIDs(settings, mode: mode)
        (teamID, keyID, privateKeyPath) = try Self.signingKey(settings)
        (appleIDURL, issuers) = try Self.apple(settings, mode: mode)
        requireCodeExchange = try Self.flag(values, "APPLE_REQUIRE_CODE_EXCHANGE")
        if requireCodeExchange && privateKeyPath == nil {
            throw ConfigurationError("APPLE_REQUIRE_CODE_EXCHANGE", "is 1 but APPLE_TEAM_ID, APPLE_KEY_ID and APPLE_PRIVATE_KEY_PATH are not set, so no code can be exchanged")
        }
        useJSSDK = try Self.flag(values, "APPLE_JS_SDK")
        useJSPopup = try Self.flag(values, "APPLE_JS_POPUP")
        if useJSPopup && !useJSSDK {
            throw ConfigurationError("APPLE_JS_POPUP", "is 1 but APPLE_JS_SDK is not: the popup is a mode of Apple's JS SDK, so set APPLE_JS_SDK=1 too")
        }
        requireNonce = try Self.flag(values, "APPLE_REQUIRE_NONCE")
        acceptUnsentNonce = try Self.flag(values, "APPLE_ACCEPT_UNSENT_NONCE")
        androidPackages = try Self.androidPackages(settings, servicesID: servicesID)
        trustedProxies = try Self.trustedProxies(settings)
        metricsToken = try Self.metricsToken(settings)
        corsOrigins = try Self.corsOrigins(settings)
        site = try SiteSettings(settings.value)
        clients = try Self.clients(settings.value("BRIDGE_CLIENTS_FILE"))
        maxAppleCallsInFlight = try Self.count(settings, "APPLE_MAX_CALLS_IN_FLIGHT", default: 32, range: 1...10_000)
        cookieDomain = try Self.cookieDomain(settings, publicURL: publicURL)
        webhooks = try Self.webhooks(settings)
    }

    /// A domain name of two labels or more (a leading dot is dropped) that the public URL's host is, or is under; a
    /// browser refuses a cookie for any other domain. Only over https: an http public URL is loopback, where a
    /// shared parent domain does not exist.
    package static func cookieDomain(_ settings: Settings, publicURL: String) throws(ConfigurationError) -> String? {
        guard var domain = settings.value("BRIDGE_COOKIE_DOMAIN") else { return nil }
        if domain.utf8.first == UInt8(ascii: ".") { domain = String(domain.dropFirst()) }
        let labels = domain.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        let isLabel: (Substring.UTF8View) -> Bool = { label in
            !label.isEmpty && label.count <= 63 && label.first != UInt8(ascii: "-") && label.last != UInt8(ascii: "-")
                && label.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "-") }
        }
        guard labels.count >= 2, labels.allSatisfy(isLabel),
              !(labels.last.map { $0.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } } ?? true) else {
            throw ConfigurationError("BRIDGE_COOKIE_DOMAIN", "must be a lower-case domain name of two labels or more, like example.com (got \"\(domain)\")")
        }
        let host = Array((URL(string: publicURL)?.host ?? "").lowercased().utf8)
        let parent = Array(domain.utf8)
        let isUnder = host == parent || (host.count > parent.count && host.suffix(parent.count).elementsEqual(parent)
                                         && host[host.count - parent.count - 1] == UInt8(ascii: "."))
        guard publicURL.hasPrefix("https://"), isUnder else {
            throw ConfigurationError("BRIDGE_COOKIE_DOMAIN", "must be the host of an https BRIDGE_PUBLIC_URL or a domain above it (got \"\(domain)\" for \(publicURL))")
        }
        return domain
    }

    /// The raw values, blank ones read as unset.
    package struct Settings {
        package let values: [String: String]

        package init(values: [String: String]) {
            self.values = values
        }

        package func value(_ key: String) -> String? {
            guard let raw = values[key]?.trimmingCharacters(in: .whitespaces), !raw.isEmpty else { return nil }
            return raw
        }
    }

    package static func listener(_ settings: Settings, mode: RunMode) throws(ConfigurationError) -> (String, Int, String) {
        let value = settings.value
        let host = value("BRIDGE_HOST") ?? "127.0.0.1"
        guard isNumericAddress(host) else {
            throw ConfigurationError("BRIDGE_HOST", "must be a numeric IP address such as 127.0.0.1 or 0.0.0.0 (got \"\(host)\")")
        }
        let portText = value("BRIDGE_PORT") ?? "8080"
        guard let port = Int(portText), (0...65535).contains(port) else {
            throw ConfigurationError("BRIDGE_PORT", "must be a port number from 0 to 65535 (got \"\(portText)\")")
        }

        let publicURL = value("BRIDGE_PUBLIC_URL") ?? "http://127.0.0.1:\(port == 0 ? 8080 : port)"
        guard let url = URL(string: publicURL), let scheme = url.scheme, ["http", "https"].contains(scheme),
              url.host != nil, url.query == nil, url.fragment == nil else {
            throw ConfigurationError("BRIDGE_PUBLIC_URL", "must be an absolute http(s) URL without query, like https://login.example.com (got \"\(publicURL)\")")
        }
        if mode == .production && scheme != "https" && !isLoopback(url.host ?? "") {
            throw ConfigurationError("BRIDGE_PUBLIC_URL", "must use https outside development: Apple only redirects to https (got \"\(publicURL)\")")
        }
        return (host, port, publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL)
    }

    package static func database(_ settings: Settings) throws(ConfigurationError) -> (DatabaseURL, Int) {
        let database = try database(settings.value("BRIDGE_DATABASE") ?? "sqlite:data/bridge.sqlite3")
        let poolText = settings.value("BRIDGE_DATABASE_POOL_SIZE") ?? String(PostgresStore.defaultPoolSize)
        guard let poolSize = Int(poolText), (1...1000).contains(poolSize) else {
            throw ConfigurationError("BRIDGE_DATABASE_POOL_SIZE", "must be a number of connections from 1 to 1000 (got \"\(poolText)\")")
        }
        return (database, poolSize)
    }

    package static func secretKey(_ settings: Settings, mode: RunMode) throws(ConfigurationError) -> [UInt8]? {
        if let encoded = settings.value("BRIDGE_SECRET_KEY") {
            guard let decoded = Data(base64Encoded: encoded), decoded.count >= 32 else {
                throw ConfigurationError("BRIDGE_SECRET_KEY", "must be base64 of at least 32 random bytes (try: openssl rand -base64 32)")
            }
            return Array(decoded)
        } else if mode == .development {
            return nil
        } else {
            throw ConfigurationError("BRIDGE_SECRET_KEY", "is missing: set it to base64 of at least 32 random bytes (try: openssl rand -base64 32)")
        }
    }

    package static func clientIDs(_ settings: Settings, mode: RunMode) throws(ConfigurationError) -> (String?, [String]) {
        let servicesID = settings.value("APPLE_SERVICES_ID")
        if let servicesID, !isClientID(servicesID) {
            throw ConfigurationError("APPLE_SERVICES_ID", "must look like a reverse-DNS identifier such as com.example.web (got \"\(servicesID)\")")
        }
        let bundleIDs = (settings.value("APPLE_BUNDLE_IDS") ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        if let bad = bundleIDs.first(where: { !isClientID($0) }) {
            throw ConfigurationError("APPLE_BUNDLE_IDS", "must be a comma list of bundle IDs such as com.example.app (got \"\(bad)\")")
        }
        if servicesID == nil && bundleIDs.isEmpty && mode == .production {
            throw ConfigurationError("APPLE_SERVICES_ID", "is missing: set APPLE_SERVICES_ID (web) and/or APPLE_BUNDLE_IDS (apps)")
        }
        if let servicesID, bundleIDs.contains(servicesID) {
            throw ConfigurationError("APPLE_BUNDLE_IDS", "must not repeat the Services ID \(servicesID): web and app client IDs are different identifiers")
        }
        return (servicesID, bundleIDs)
    }

    package static func signingKey(_ settings: Settings) throws(ConfigurationError) -> (String?, String?, String?) {
        let teamID = settings.value("APPLE_TEAM_ID")
        let keyID = settings.value("APPLE_KEY_ID")
        let privateKeyPath = settings.value("APPLE_PRIVATE_KEY_PATH")
        if let teamID, !isAppleTenCharacterID(teamID) {
            throw ConfigurationError("APPLE_TEAM_ID", "must be the 10-character Team ID from your Apple developer account (got \"\(teamID)\")")
        }
        if let keyID, !isAppleTenCharacterID(keyID) {
            throw ConfigurationError("APPLE_KEY_ID", "must be the 10-character Key ID of your Sign in with Apple key (got \"\(keyID)\")")
        }
        let keySettings: [(String, String?)] = [("APPLE_TEAM_ID", teamID), ("APPLE_KEY_ID", keyID), ("APPLE_PRIVATE_KEY_PATH", privateKeyPath)]
        if keySettings.contains(where: { $0.1 != nil }), let missing = keySettings.first(where: { $0.1 == nil }) {
            throw ConfigurationError(missing.0, "is missing: APPLE_TEAM_ID, APPLE_KEY_ID and APPLE_PRIVATE_KEY_PATH go together")
        }
        return (teamID, keyID, privateKeyPath)
    }

    package static func apple(_ settings: Settings, mode: RunMode) throws(ConfigurationError) -> (String, [String]) {
        var appleIDURL = settings.value("APPLE_ID_URL") ?? appleIDURLDefault
        guard let apple = URL(string: appleIDURL), let appleScheme = apple.scheme, ["http", "https"].contains(appleScheme),
              apple.host != nil else {
            throw ConfigurationError("APPLE_ID_URL", "must be an absolute URL such as https://appleid.apple.com (got \"\(appleIDURL)\")")
        }
        // Plain http only on loopback: a local stand-in for Apple when staging, never across a network.
        if mode == .production && appleScheme != "https" && !isLoopback(apple.host ?? "") {
            throw ConfigurationError("APPLE_ID_URL", "must use https outside development mode, except on loopback (got \"\(appleIDURL)\")")
        }
        if appleIDURL.hasSuffix("/") { appleIDURL.removeLast() }

        let issuers = (settings.value("APPLE_ISSUER") ?? "https://appleid.apple.com").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        if issuers.isEmpty || issuers.contains(where: { URL(string: $0)?.scheme == nil }) {
            throw ConfigurationError("APPLE_ISSUER", "must be a comma list of issuer URLs such as https://appleid.apple.com")
        }
        return (appleIDURL, issuers)
    }

    package static func count(_ settings: Settings, _ key: String, default fallback: Int,
                              range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
        guard let text = settings.value(key) else { return fallback }
        guard let value = Int(text), range.contains(value) else {
            throw ConfigurationError(key, "must be a whole number from \(range.lowerBound) to \(range.upperBound) (got \"\(text)\")")
        }
        return value
    }

    package static func flag(_ values: [String: String], _ key: String) throws(ConfigurationError) -> Bool {
        switch values[key]?.trimmingCharacters(in: .whitespaces).lowercased() {
        case nil, "", "0", "false", "no": return false
        case "1", "true", "yes": return true
        case let other?: throw ConfigurationError(key, "must be 0 or 1 (got \"\(other)\")")
        }
    }

    package static func readConfigFile(_ path: String) throws(ConfigurationError) -> [String: String] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ConfigurationError("--config", "file \(path) cannot be read")
        }
        var values: [String: String] = [:]
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let body = line.hasPrefix("export ") ? String(line.dropFirst(7)) : line
            guard let equals = body.firstIndex(of: "=") else {
                throw ConfigurationError("--config", "\(path):\(index + 1): expected KEY=value")
            }
            let key = body[..<equals].trimmingCharacters(in: .whitespaces)
            var value = body[body.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, let first = value.first, first == "\"" || first == "'", value.last == first {
                value = String(value.dropFirst().dropLast())
            }
            guard keys.contains(key) else {
                throw ConfigurationError(key, "in \(path):\(index + 1) is not a known setting")
            }
            values[key] = value
        }
        return values
    }

    package static func isNumericAddress(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    /// `localhost`, an address in 127.0.0.0/8, or ::1; a name that merely starts with "127." is not.
    package static func isLoopback(_ host: String) -> Bool {
        host.lowercased() == "localhost" || AddressRange.loopback.contains { $0.contains(host) }
    }

    package static func isClientID(_ id: String) -> Bool {
        id.count <= 255 && id.contains(".") && id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }
    }

    package static func isAppleTenCharacterID(_ id: String) -> Bool {
        id.count == 10 && id.allSatisfy { $0.isASCII && ($0.isUppercase || $0.isNumber) }
    }

    /// `BRIDGE_DATABASE` parsed; the error never repeats a password.
    package static func database(_ value: String) throws(ConfigurationError) -> DatabaseURL {
        do {
            return try DatabaseURL(value)
        } catch {
            if value.hasPrefix("sqlite:") {
                throw ConfigurationError("BRIDGE_DATABASE", "needs a file path after sqlite: (e.g. sqlite:data/bridge.sqlite3)")
            }
            if case let .unsupportedURL(shown, reason) = error, value.hasPrefix("postgres") {
                throw ConfigurationError("BRIDGE_DATABASE", "is not a valid PostgreSQL URL (\(reason)): \"\(shown)\"")
            }
            throw ConfigurationError("BRIDGE_DATABASE", "must be sqlite:PATH or postgres://… (got \"\(redactedDatabase(value))\")")
        }
    }

    /// A database URL with any password removed, safe to print.
    package static func redactedDatabase(_ url: String) -> String {
        guard let at = url.firstIndex(of: "@"), let scheme = url.range(of: "://") else { return url }
        return String(url[..<scheme.upperBound]) + "…" + String(url[at...])
    }
}
