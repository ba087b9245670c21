import AppleID
import Bridge
import BridgeSettings
import Foundation

/// `apple-signin-bridge doctor`: the answer to "why does Apple say invalid_client". Checks the configuration
/// offline and, with `online`, that Apple's keys are reachable and a client secret is accepted.
public enum Doctor {
    public struct Finding: Equatable, Sendable, CustomStringConvertible {
        public enum Level: String, Sendable { case ok, warning, error }
        public var level: Level
        public var message: String
        public var description: String { "\(level.rawValue): \(message)" }
    }

    public static func run(environment: [String: String], configFile: String?, online: Bool,
                           transport: any AppleHTTPTransport = URLSessionTransport()) -> [Finding] {
        var report = Report()
        guard let configuration = loadConfiguration(environment: environment, configFile: configFile, into: &report) else {
            return report.findings
        }
        checkRedirectURI(configuration, into: &report)
        checkClientIDs(configuration, into: &report)
        let clientKey = checkClientKey(configuration, into: &report)
        checkAppleURLs(configuration, into: &report)
        if online { checkApple(configuration, clientKey: clientKey, transport: transport, into: &report) }
        return report.findings
    }

    /// Findings in the order they were made.
    package struct Report {
        package var findings: [Finding] = []

        package init(findings: [Finding] = []) {
            self.findings = findings
        }
        package mutating func ok(_ message: String) { findings.append(Finding(level: .ok, message: message)) }
        package mutating func warn(_ message: String) { findings.append(Finding(level: .warning, message: message)) }
        package mutating func fail(_ message: String) { findings.append(Finding(level: .error, message: message)) }
    }

    /// The configuration as `serve` reads it; when that fails, read leniently so the other checks still run.
    package static func loadConfiguration(environment: [String: String], configFile: String?,
                                          into report: inout Report) -> BridgeConfiguration? {
        do {
            let configuration = try BridgeConfiguration.load(environment: environment, configFile: configFile, mode: .production)
            report.ok("the configuration loads")
            return configuration
        } catch {
            report.fail("\(error.key) \(error.problem)")
            return try? BridgeConfiguration.load(environment: environment, configFile: configFile, mode: .development)
        }
    }

    package static func checkRedirectURI(_ configuration: BridgeConfiguration, into report: inout Report) {
        // Return URL: Apple accepts only https on a domain name, and matches it to the letter.
        let redirect = configuration.redirectURI
        if let url = URLComponents(string: configuration.publicURL), let host = url.host {
            if url.scheme != "https" {
                report.fail("redirect_uri \(redirect) is not https: Apple refuses it. Set BRIDGE_PUBLIC_URL to https://your-domain behind a TLS proxy")
            } else if BridgeConfiguration.isNumericAddress(host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))) || host == "localhost" {
                report.fail("redirect_uri \(redirect) uses \(host): Apple refuses IP addresses and localhost. Use a domain name in BRIDGE_PUBLIC_URL")
            } else if url.port == 443 {
                report.warn("BRIDGE_PUBLIC_URL names port 443 explicitly; register the Return URL exactly as \(redirect) or drop \":443\"")
            } else {
                report.ok("redirect_uri is \(redirect): register exactly this as a Return URL of the Services ID")
            }
        }
    }

    /// Web and app identifiers are different things at Apple.
    package static func checkClientIDs(_ configuration: BridgeConfiguration, into report: inout Report) {
        if let servicesID = configuration.servicesID {
            report.ok("web sign-in uses the Services ID \(servicesID) (the client_id of the authorize link and web code exchanges)")
        } else {
            report.warn("APPLE_SERVICES_ID is not set: the web and Android sign-in is off")
        }
        if configuration.bundleIDs.isEmpty {
            report.warn("APPLE_BUNDLE_IDS is not set: tokens from iOS apps (aud = bundle ID) will be refused")
        } else {
            report.ok("app tokens are accepted for \(configuration.bundleIDs.joined(separator: ", "))")
        }
    }

    /// The key that signs client secrets, if it is configured and loads.
    package static func checkClientKey(_ configuration: BridgeConfiguration, into report: inout Report) -> AppleClientKey? {
        if let teamID = configuration.teamID, let keyID = configuration.keyID, let path = configuration.privateKeyPath {
            report.ok("APPLE_TEAM_ID \(teamID) and APPLE_KEY_ID \(keyID) have the right shape")
            do {
                let clientKey = try CompositionRoot.clientKey(configuration)
                report.ok("\(path) is a P-256 key readable only by its owner")
                return clientKey
            } catch {
                report.fail(error.problem)
            }
        } else {
            report.warn("APPLE_TEAM_ID, APPLE_KEY_ID and APPLE_PRIVATE_KEY_PATH are not set: codes are not exchanged and deleted accounts cannot be revoked at Apple, which App Store review requires")
        }
        return nil
    }

    package static func checkAppleURLs(_ configuration: BridgeConfiguration, into report: inout Report) {
        if configuration.appleIDURL != "https://appleid.apple.com" {
            report.warn("APPLE_ID_URL is \(configuration.appleIDURL), not https://appleid.apple.com")
        }
        if let odd = configuration.issuers.first(where: { !["https://appleid.apple.com", "https://account.apple.com"].contains($0) }) {
            report.warn("APPLE_ISSUER accepts \(odd), which is not an Apple issuer")
        }
    }

    /// Online: Apple's keys can be fetched, and Apple accepts a client secret for every client ID.
    package static func checkApple(_ configuration: BridgeConfiguration, clientKey: AppleClientKey?,
                                   transport: any AppleHTTPTransport, into report: inout Report) {
        let apple = CompositionRoot.appleServices(configuration, clientKey: clientKey, transport: transport)
        if apple.keys.prefetch() {
            report.ok("Apple's keys are reachable at \(configuration.appleIDURL)/auth/keys (\(apple.keys.knownKeyIDs.count) keys)")
        } else {
            report.fail("Apple's keys could not be fetched from \(configuration.appleIDURL)/auth/keys: check outbound HTTPS from this host")
        }
        guard let client = apple.tokenClient else { return }
        let targets = (configuration.servicesID.map { [($0, Optional(configuration.redirectURI))] } ?? []) + configuration.bundleIDs.map { ($0, nil) }
        for (clientID, redirectURI) in targets {
            switch client.checkClientSecret(clientID: clientID, redirectURI: redirectURI) {
            case .accepted:
                report.ok("Apple accepts the client secret for \(clientID)")
            case let .rejected(advice):
                report.fail("Apple says invalid_client for \(clientID): \(advice)")
            case let .inconclusive(reason):
                report.warn("could not check the client secret for \(clientID): \(reason)")
            }
        }
    }
}
