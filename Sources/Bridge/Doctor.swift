import AppleID
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
        var findings: [Finding] = []
        func ok(_ message: String) { findings.append(Finding(level: .ok, message: message)) }
        func warn(_ message: String) { findings.append(Finding(level: .warning, message: message)) }
        func fail(_ message: String) { findings.append(Finding(level: .error, message: message)) }

        let configuration: BridgeConfiguration
        do {
            configuration = try BridgeConfiguration.load(environment: environment, configFile: configFile, mode: .production)
            ok("the configuration loads")
        } catch {
            fail("\(error.key) \(error.problem)")
            guard let lenient = try? BridgeConfiguration.load(environment: environment, configFile: configFile,
                                                               mode: .development) else { return findings }
            configuration = lenient
        }

        // Return URL: Apple accepts only https on a domain name, and matches it to the letter.
        let redirect = configuration.redirectURI
        if let url = URLComponents(string: configuration.publicURL), let host = url.host {
            if url.scheme != "https" {
                fail("redirect_uri \(redirect) is not https: Apple refuses it. Set BRIDGE_PUBLIC_URL to https://your-domain behind a TLS proxy")
            } else if BridgeConfiguration.isNumericAddress(host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))) || host == "localhost" {
                fail("redirect_uri \(redirect) uses \(host): Apple refuses IP addresses and localhost. Use a domain name in BRIDGE_PUBLIC_URL")
            } else if url.port == 443 {
                warn("BRIDGE_PUBLIC_URL names port 443 explicitly; register the Return URL exactly as \(redirect) or drop \":443\"")
            } else {
                ok("redirect_uri is \(redirect): register exactly this as a Return URL of the Services ID")
            }
        }

        // Client IDs: web and app identifiers are different things at Apple.
        if let servicesID = configuration.servicesID {
            ok("web sign-in uses the Services ID \(servicesID) (the client_id of the authorize link and web code exchanges)")
        } else {
            warn("APPLE_SERVICES_ID is not set: the web and Android sign-in is off")
        }
        if configuration.bundleIDs.isEmpty {
            warn("APPLE_BUNDLE_IDS is not set: tokens from iOS apps (aud = bundle ID) will be refused")
        } else {
            ok("app tokens are accepted for \(configuration.bundleIDs.joined(separator: ", "))")
        }

        // The key for client secrets.
        var secrets: ClientSecretProvider?
        if let teamID = configuration.teamID, let keyID = configuration.keyID, let path = configuration.privateKeyPath {
            ok("APPLE_TEAM_ID \(teamID) and APPLE_KEY_ID \(keyID) have the right shape")
            do {
                let key = try AppleClientKey.load(teamID: teamID, keyID: keyID, path: path)
                secrets = ClientSecretProvider(key: key)
                ok("\(path) is a P-256 key readable only by its owner")
            } catch {
                fail(error.description)
            }
        } else {
            warn("APPLE_TEAM_ID, APPLE_KEY_ID and APPLE_PRIVATE_KEY_PATH are not set: codes are not exchanged and deleted accounts cannot be revoked at Apple, which App Store review requires")
        }

        if configuration.appleIDURL != "https://appleid.apple.com" {
            warn("APPLE_ID_URL is \(configuration.appleIDURL), not https://appleid.apple.com")
        }
        if let odd = configuration.issuers.first(where: { !["https://appleid.apple.com", "https://account.apple.com"].contains($0) }) {
            warn("APPLE_ISSUER accepts \(odd), which is not an Apple issuer")
        }

        guard online else { return findings }
        let keys = JWKSCache(url: configuration.appleIDURL + "/auth/keys", transport: transport)
        if keys.prefetch() {
            ok("Apple's keys are reachable at \(configuration.appleIDURL)/auth/keys (\(keys.knownKeyIDs.count) keys)")
        } else {
            fail("Apple's keys could not be fetched from \(configuration.appleIDURL)/auth/keys: check outbound HTTPS from this host")
        }
        guard let secrets else { return findings }
        let verifier = IdentityTokenVerifier(policy: VerificationPolicy(issuers: configuration.issuers,
                                                                       servicesID: configuration.servicesID,
                                                                       bundleIDs: configuration.bundleIDs), keys: keys)
        let client = AppleTokenClient(baseURL: configuration.appleIDURL, transport: transport, secrets: secrets, verifier: verifier)
        let targets = (configuration.servicesID.map { [($0, Optional(redirect))] } ?? []) + configuration.bundleIDs.map { ($0, nil) }
        for (clientID, redirectURI) in targets {
            switch client.checkClientSecret(clientID: clientID, redirectURI: redirectURI) {
            case .accepted:
                ok("Apple accepts the client secret for \(clientID)")
            case let .rejected(advice):
                fail("Apple says invalid_client for \(clientID): \(advice)")
            case let .inconclusive(reason):
                warn("could not check the client secret for \(clientID): \(reason)")
            }
        }
        return findings
    }
}
