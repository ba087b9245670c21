import Foundation
import Storage

/// A start-up setting that is missing or malformed. Its description is the one line the operator sees.
public struct ConfigurationError: Error, Equatable, CustomStringConvertible {
    public let key: String
    public let problem: String

    public init(_ key: String, _ problem: String) {
        self.key = key
        self.problem = problem
    }

    public var description: String { "configuration error: \(key) \(problem)" }
}

/// How the server was started. Development mode trusts the local Apple ID simulator and may generate a secret key.
public enum RunMode: String, Sendable {
    case production
    case development
}

/// Every setting of the configuration contract in DESIGN.md, validated.
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
    /// Nil only in development mode until `resolveDevelopmentSecret` fills it.
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

    public var redirectURI: String { publicURL + "/apple_redirect" }

    /// Every client ID a token's `aud` may name.
    public var clientIDs: [String] { (servicesID.map { [$0] } ?? []) + bundleIDs }

    /// The public URL is https, so cookies marked Secure reach the server. Over plain http on loopback
    /// browsers still accept Secure cookies for localhost/127.0.0.1.
    public var isHTTPS: Bool { publicURL.hasPrefix("https://") }

    public static let keys = [
        "BRIDGE_HOST", "BRIDGE_PORT", "BRIDGE_PUBLIC_URL", "BRIDGE_DATABASE", "BRIDGE_DATABASE_POOL_SIZE", "BRIDGE_SECRET_KEY",
        "APPLE_SERVICES_ID", "APPLE_BUNDLE_IDS", "APPLE_TEAM_ID", "APPLE_KEY_ID", "APPLE_PRIVATE_KEY_PATH",
        "APPLE_ID_URL", "APPLE_ISSUER", "APPLE_REQUIRE_CODE_EXCHANGE", "APPLE_JS_SDK",
    ]

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
        func value(_ key: String) -> String? {
            guard let raw = values[key]?.trimmingCharacters(in: .whitespaces), !raw.isEmpty else { return nil }
            return raw
        }
        self.mode = mode
        host = value("BRIDGE_HOST") ?? "127.0.0.1"
        guard Self.isNumericAddress(host) else {
            throw ConfigurationError("BRIDGE_HOST", "must be a numeric IP address such as 127.0.0.1 or 0.0.0.0 (got \"\(host)\")")
        }
        let portText = value("BRIDGE_PORT") ?? "8080"
        guard let port = Int(portText), (0...65535).contains(port) else {
            throw ConfigurationError("BRIDGE_PORT", "must be a port number from 0 to 65535 (got \"\(portText)\")")
        }
        self.port = port

        let publicURL = value("BRIDGE_PUBLIC_URL") ?? "http://127.0.0.1:\(port == 0 ? 8080 : port)"
        guard let url = URL(string: publicURL), let scheme = url.scheme, ["http", "https"].contains(scheme),
              url.host != nil, url.query == nil, url.fragment == nil else {
            throw ConfigurationError("BRIDGE_PUBLIC_URL", "must be an absolute http(s) URL without query, like https://login.example.com (got \"\(publicURL)\")")
        }
        if mode == .production && scheme != "https" && !Self.isLoopback(url.host ?? "") {
            throw ConfigurationError("BRIDGE_PUBLIC_URL", "must use https outside development: Apple only redirects to https (got \"\(publicURL)\")")
        }
        self.publicURL = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL

        database = try Self.database(value("BRIDGE_DATABASE") ?? "sqlite:data/bridge.sqlite3")
        let poolText = value("BRIDGE_DATABASE_POOL_SIZE") ?? String(PostgresStore.defaultPoolSize)
        guard let poolSize = Int(poolText), (1...1000).contains(poolSize) else {
            throw ConfigurationError("BRIDGE_DATABASE_POOL_SIZE", "must be a number of connections from 1 to 1000 (got \"\(poolText)\")")
        }
        databasePoolSize = poolSize

        if let encoded = value("BRIDGE_SECRET_KEY") {
            guard let decoded = Data(base64Encoded: encoded), decoded.count >= 32 else {
                throw ConfigurationError("BRIDGE_SECRET_KEY", "must be base64 of at least 32 random bytes (try: openssl rand -base64 32)")
            }
            secretKey = Array(decoded)
        } else if mode == .development {
            secretKey = nil
        } else {
            throw ConfigurationError("BRIDGE_SECRET_KEY", "is missing: set it to base64 of at least 32 random bytes (try: openssl rand -base64 32)")
        }

        servicesID = value("APPLE_SERVICES_ID")
        if let servicesID, !Self.isClientID(servicesID) {
            throw ConfigurationError("APPLE_SERVICES_ID", "must look like a reverse-DNS identifier such as com.example.web (got \"\(servicesID)\")")
        }
        bundleIDs = (value("APPLE_BUNDLE_IDS") ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        if let bad = bundleIDs.first(where: { !Self.isClientID($0) }) {
            throw ConfigurationError("APPLE_BUNDLE_IDS", "must be a comma list of bundle IDs such as com.example.app (got \"\(bad)\")")
        }
        if servicesID == nil && bundleIDs.isEmpty && mode == .production {
            throw ConfigurationError("APPLE_SERVICES_ID", "is missing: set APPLE_SERVICES_ID (web) and/or APPLE_BUNDLE_IDS (apps)")
        }
        if let servicesID, bundleIDs.contains(servicesID) {
            throw ConfigurationError("APPLE_BUNDLE_IDS", "must not repeat the Services ID \(servicesID): web and app client IDs are different identifiers")
        }

        teamID = value("APPLE_TEAM_ID")
        keyID = value("APPLE_KEY_ID")
        privateKeyPath = value("APPLE_PRIVATE_KEY_PATH")
        if let teamID, !Self.isAppleTenCharacterID(teamID) {
            throw ConfigurationError("APPLE_TEAM_ID", "must be the 10-character Team ID from your Apple developer account (got \"\(teamID)\")")
        }
        if let keyID, !Self.isAppleTenCharacterID(keyID) {
            throw ConfigurationError("APPLE_KEY_ID", "must be the 10-character Key ID of your Sign in with Apple key (got \"\(keyID)\")")
        }
        let keySettings: [(String, String?)] = [("APPLE_TEAM_ID", teamID), ("APPLE_KEY_ID", keyID), ("APPLE_PRIVATE_KEY_PATH", privateKeyPath)]
        if keySettings.contains(where: { $0.1 != nil }), let missing = keySettings.first(where: { $0.1 == nil }) {
            throw ConfigurationError(missing.0, "is missing: APPLE_TEAM_ID, APPLE_KEY_ID and APPLE_PRIVATE_KEY_PATH go together")
        }

        appleIDURL = value("APPLE_ID_URL") ?? "https://appleid.apple.com"
        guard let apple = URL(string: appleIDURL), let appleScheme = apple.scheme, ["http", "https"].contains(appleScheme),
              apple.host != nil else {
            throw ConfigurationError("APPLE_ID_URL", "must be an absolute URL such as https://appleid.apple.com (got \"\(appleIDURL)\")")
        }
        if mode == .production && appleScheme != "https" {
            throw ConfigurationError("APPLE_ID_URL", "must use https outside development mode (got \"\(appleIDURL)\")")
        }
        if appleIDURL.hasSuffix("/") { appleIDURL.removeLast() }

        issuers = (value("APPLE_ISSUER") ?? "https://appleid.apple.com").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        if issuers.isEmpty || issuers.contains(where: { URL(string: $0)?.scheme == nil }) {
            throw ConfigurationError("APPLE_ISSUER", "must be a comma list of issuer URLs such as https://appleid.apple.com")
        }

        requireCodeExchange = try Self.flag(values, "APPLE_REQUIRE_CODE_EXCHANGE")
        if requireCodeExchange && privateKeyPath == nil {
            throw ConfigurationError("APPLE_REQUIRE_CODE_EXCHANGE", "is 1 but APPLE_TEAM_ID, APPLE_KEY_ID and APPLE_PRIVATE_KEY_PATH are not set, so no code can be exchanged")
        }
        useJSSDK = try Self.flag(values, "APPLE_JS_SDK")
    }

    static func flag(_ values: [String: String], _ key: String) throws(ConfigurationError) -> Bool {
        switch values[key]?.trimmingCharacters(in: .whitespaces).lowercased() {
        case nil, "", "0", "false", "no": return false
        case "1", "true", "yes": return true
        case let other?: throw ConfigurationError(key, "must be 0 or 1 (got \"\(other)\")")
        }
    }

    static func readConfigFile(_ path: String) throws(ConfigurationError) -> [String: String] {
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

    static func isNumericAddress(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host.hasPrefix("127.") || host == "::1" || host == "[::1]"
    }

    static func isClientID(_ id: String) -> Bool {
        id.count <= 255 && id.contains(".") && id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }
    }

    static func isAppleTenCharacterID(_ id: String) -> Bool {
        id.count == 10 && id.allSatisfy { $0.isASCII && ($0.isUppercase || $0.isNumber) }
    }

    /// `BRIDGE_DATABASE` parsed; the error never repeats a password.
    static func database(_ value: String) throws(ConfigurationError) -> DatabaseURL {
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
    static func redactedDatabase(_ url: String) -> String {
        guard let at = url.firstIndex(of: "@"), let scheme = url.range(of: "://") else { return url }
        return String(url[..<scheme.upperBound]) + "…" + String(url[at...])
    }
}
