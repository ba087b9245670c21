import AppleID
import AppleIDSimulator
import Bridge
import BridgeSettings
import Foundation
import HTTPServer
import Logging
import OperatorCommands
import Storage

/// The release: scripts/package reads it from `--version` for the package's version, CHANGELOG.md describes it.
let version = "0.1.0"

let usage = """
apple-signin-bridge \(version) — finishes Sign in with Apple for browsers, Android and hybrid apps.

Usage:
  apple-signin-bridge serve [--config FILE]     run the server (configuration from the environment; FILE adds keys)
  apple-signin-bridge dev [--config FILE]       run with development defaults and the local Apple ID simulator
                                                (on SIMULATOR_PORT from the environment, else BRIDGE_PORT+1)
  apple-signin-bridge verify-token TOKEN [--nonce N] [--code C] [--config FILE]
                                                verify an identity token and print its claims or why it fails
  apple-signin-bridge doctor [--online] [--config FILE]
                                                check the configuration (and, online, Apple's answer) line by line
  apple-signin-bridge client-secret [--client-id ID] [--config FILE]
                                                print an ES256 client secret, for trying Apple's endpoints with curl
  apple-signin-bridge keys rotate [--config FILE]
                                                add an OpenID provider signing key that signs from now on
  apple-signin-bridge members find --sub SUB | --email EMAIL [--config FILE]
  apple-signin-bridge members export --id ID [--config FILE]
  apple-signin-bridge members delete --id ID --yes [--config FILE]
                                                a member's data on request: find them, export everything kept, delete
                                                (exit 3: no such member; see docs/member-requests.md)
  apple-signin-bridge members groups --id ID [--add GROUP | --remove GROUP] [--config FILE]
                                                show (and change) a member's groups, for forward auth's ?group=
  apple-signin-bridge invite --group GROUP [--expires DURATION] [--config FILE]
                                                print a single-use link: the first person who signs in through it
                                                joins GROUP (DURATION: 7d, 12h, 30m; default 7d; docs/forward-auth.md)
  apple-signin-bridge transfer export --target-team TEAMID [--client-id ID] [--config FILE]
                                                before moving the app to another Apple team: record each member's transfer_sub
  apple-signin-bridge transfer import [--client-id ID] [--config FILE]
                                                after the move, as the new team: move each member to its new sub
  apple-signin-bridge webhooks list [--failed] | webhooks retry | webhooks test [--config FILE]
                                                the webhook outbox: what waits or failed, failed ones sent again, a signed
                                                ping to BRIDGE_WEBHOOK_URL (docs/webhooks.md)
  apple-signin-bridge simulator                 the local Apple ID simulator alone, on SIMULATOR_PORT (default 8081)
  apple-signin-bridge notify --to URL --event consent-revoked|account-delete|email-disabled|email-enabled --sub SUB [--client-id ID]
                                                a server-to-server notification signed by the running simulator, posted to URL
  apple-signin-bridge backup --to FILE [--force] [--config FILE]
                                                a consistent copy of the SQLite database, also while servers run
                                                (PostgreSQL: pg_dump); --force replaces an existing FILE
  apple-signin-bridge --help | --version       --version: the release and the database schema version it migrates to

Every command also takes --resources DIR: the folder with Templates/, Public/ and Locales/ (found automatically otherwise).

Configuration keys (environment): BRIDGE_HOST BRIDGE_PORT BRIDGE_PUBLIC_URL BRIDGE_DATABASE BRIDGE_DATABASE_POOL_SIZE BRIDGE_SECRET_KEY
  APPLE_SERVICES_ID APPLE_BUNDLE_IDS APPLE_TEAM_ID APPLE_KEY_ID APPLE_PRIVATE_KEY_PATH APPLE_ID_URL APPLE_ISSUER
  APPLE_REQUIRE_CODE_EXCHANGE APPLE_JS_SDK APPLE_JS_POPUP APPLE_REQUIRE_NONCE BRIDGE_TRUSTED_PROXIES BRIDGE_CORS_ORIGINS
  BRIDGE_METRICS_TOKEN BRIDGE_CLIENTS_FILE BRIDGE_SITE_NAME BRIDGE_SITE_LOGO BRIDGE_AFTER_SIGN_IN_URL
  BRIDGE_RETURN_URLS APPLE_MAX_CALLS_IN_FLIGHT BRIDGE_COOKIE_DOMAIN BRIDGE_WEBHOOK_URL BRIDGE_WEBHOOK_SECRET
  BRIDGE_WEBHOOK_EVENTS — see README.md.
"""

/// Prints one line to standard error and exits with `code`.
func fail(_ message: String, code: Int32 = 2) -> Never {
    Logger.flush()
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(code)
}

struct Arguments {
    var command = "serve"
    var positional: [String] = []
    var options: [String: String] = [:]

    /// Options that take a value; anything else starting with -- is refused rather than silently ignored.
    static let valueOptions: Set<String> = ["config", "resources", "nonce", "code", "client-id", "sub", "email", "id", "target-team",
                                            "group", "expires", "add", "remove", "to", "event"]
    /// Options without a value, kept with their dashes.
    static let flags: Set<String> = ["--help", "-h", "--version", "--online", "--yes", "--force", "--failed"]

    init(_ raw: [String]) {
        var rest = raw[...]
        if let first = rest.first, !first.hasPrefix("-") {
            command = first
            rest = rest.dropFirst()
        }
        while let argument = rest.popFirst() {
            if Self.flags.contains(argument) {
                options[argument] = ""
            } else if argument.hasPrefix("--") {
                let parts = argument.dropFirst(2).split(separator: "=", maxSplits: 1)
                guard Self.valueOptions.contains(String(parts.first ?? "")) else {
                    fail("unknown option \(argument.split(separator: "=").first ?? ""); try apple-signin-bridge --help")
                }
                guard options[String(parts[0])] == nil else { fail("option --\(parts[0]) is given twice") }
                if parts.count == 2 {
                    options[String(parts[0])] = String(parts[1])
                } else if let value = rest.popFirst() {
                    options[String(parts[0])] = value
                } else {
                    fail("option \(argument) needs a value")
                }
            } else {
                positional.append(argument)
            }
        }
    }
}

let arguments = Arguments(Array(CommandLine.arguments.dropFirst()))
if arguments.options["--help"] != nil || arguments.options["-h"] != nil || arguments.command == "help" {
    print(usage)
    exit(0)
}
if arguments.options["--version"] != nil || arguments.command == "version" {
    print("apple-signin-bridge \(version) (database schema version \(SchemaVersion.current))")
    exit(0)
}

let environment = ProcessInfo.processInfo.environment
let logger = Logger()

func loadConfiguration(mode: RunMode, defaults: [String: String] = [:]) -> BridgeConfiguration {
    do {
        return try BridgeConfiguration.load(environment: environment, configFile: arguments.options["config"],
                                            mode: mode, defaults: defaults)
    } catch {
        fail(error.description)
    }
}

func resources() -> String {
    guard let directory = ResourceLocator.find(explicit: arguments.options["resources"]) else {
        fail("cannot find Templates/ and Public/: run from the project folder or pass --resources DIR")
    }
    return directory
}

/// Runs until SIGINT/SIGTERM, then shuts down gracefully and exits 0.
func run(_ server: BridgeServer, extra: [MicroHTTPDListener] = [], banner: String? = nil) -> Never {
    let configuration = server.app.configuration
    do {
        try server.start()
    } catch {
        fail("configuration error: BRIDGE_PORT \(configuration.port) cannot be listened on at \(configuration.host) (in use by another program, or not allowed)", code: 1)
    }
    if let banner {
        FileHandle.standardOutput.write(Data((banner + "\n").utf8))  // unbuffered: shows at once, even in a pipe
    }
    logger.info("listening", ["address": "\(configuration.host):\(server.http.port)", "public_url": configuration.publicURL,
                              "mode": configuration.mode.rawValue, "apple_id_url": configuration.appleIDURL])
    let signal = ShutdownSignals.wait()
    logger.info("shutting_down", ["signal": signal == SIGTERM ? "SIGTERM" : "SIGINT"])
    server.shutdown()
    extra.forEach { $0.shutdown() }
    logger.info("stopped")
    exit(0)
}

func serve() -> Never {
    ShutdownSignals.block()
    let configuration = loadConfiguration(mode: .production)
    do {
        run(try BridgeServer(configuration: configuration, resourcesDirectory: resources(), logger: logger))
    } catch {
        fail(String(describing: error), code: 1)
    }
}

/// Development: development defaults, and the Apple ID simulator unless APPLE_ID_URL names another Apple.
func dev() -> Never {
    ShutdownSignals.block()
    var defaults = [
        "APPLE_SERVICES_ID": "dev.applesigninbridge.web",
        "APPLE_BUNDLE_IDS": "dev.applesigninbridge.app",
    ]
    // Read once without the simulator to learn the port (environment or --config) and whether Apple is named.
    let preliminary = loadConfiguration(mode: .development, defaults: defaults)
    var simulatorServer: MicroHTTPDListener?
    if preliminary.appleIDURL == "https://appleid.apple.com" {
        let listener = startSimulator(bridgePort: preliminary.port,
                                      callbackDestinations: [preliminary.redirectURI: preliminary.signInDestinationSources]
                                        .merging(preliminary.androidRelayDestinationSources) { callback, _ in callback },
                                      returnURLs: [preliminary.redirectURI] + preliminary.androidRelayDestinationSources.keys.sorted())
        simulatorServer = listener
        defaults["APPLE_ID_URL"] = "http://127.0.0.1:\(listener.port)"
    }
    let configuration = loadConfiguration(mode: .development, defaults: defaults)
    do {
        let server = try BridgeServer(configuration: configuration, resourcesDirectory: resources(), logger: logger)
        run(server, extra: simulatorServer.map { [$0] } ?? [],
            banner: "AppleSignInBridge (development) — open \(configuration.publicURL)/login")
    } catch {
        fail(String(describing: error), code: 1)
    }
}

/// The simulator on SIMULATOR_PORT from the environment, else the bridge's port + 1.
/// `callbackDestinations`: where the bridge's answer to the simulator's form post may send the browser on.
/// `returnURLs`: the Return URLs it sends sign-ins to, unless SIMULATOR_RETURN_URLS (a comma list) names others.
/// `anyLoopbackReturnURL` (the simulator alone): any loopback Return URL unless SIMULATOR_RETURN_URLS names others.
func startSimulator(bridgePort port: Int, callbackDestinations: [String: [String]], returnURLs: [String],
                    anyLoopbackReturnURL: Bool = false) -> MicroHTTPDListener {
    let simulatorPort = Int(environment["SIMULATOR_PORT"] ?? "") ?? (port == 0 ? 0 : port + 1)
    let configured = (environment["SIMULATOR_RETURN_URLS"] ?? "").split(separator: ",")
        .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    do {
        let allowed: ReturnURLs = configured.isEmpty ? (anyLoopbackReturnURL ? .loopback : .only(returnURLs)) : .only(configured)
        let simulator = try AppleIDStandIn(callbackDestinations: callbackDestinations, returnURLs: allowed, logger: logger)
        let listener = MicroHTTPDListener(configuration: ServerConfiguration(host: "127.0.0.1", port: simulatorPort),
                                  responder: simulator, logger: logger)
        try listener.start()
        logger.info("simulator_listening", ["url": "http://127.0.0.1:\(listener.port)"])
        return listener
    } catch {
        fail("configuration error: SIMULATOR_PORT \(simulatorPort) cannot be listened on at 127.0.0.1 (in use by another program?)", code: 1)
    }
}

func verifyToken() -> Never {
    guard let token = arguments.positional.first else { fail("usage: apple-signin-bridge verify-token TOKEN [--nonce N] [--code C] [--config FILE]") }
    let configuration = loadConfiguration(mode: .development)
    let apple = CompositionRoot.appleServices(configuration, clientKey: nil, transport: URLSessionTransport())
    do {
        let identity = try apple.verifier.verify(token, context: VerificationContext(
            expectedNonce: arguments.options["nonce"], authorizationCode: arguments.options["code"]))
        print(TokenReport.describe(identity))
        exit(0)
    } catch {
        fail("invalid (\(error.code)): \(error.description)", code: 1)
    }
}

func doctor() -> Never {
    let findings = Doctor.run(environment: environment, configFile: arguments.options["config"],
                              online: arguments.options["--online"] != nil)
    findings.forEach { print($0.description) }
    exit(findings.contains { $0.level == .error } ? 1 : 0)
}

/// `keys rotate`: a new OpenID provider signing key in the configured database.
func keys() -> Never {
    guard arguments.positional == ["rotate"] else { fail("usage: apple-signin-bridge keys rotate [--config FILE]") }
    let configuration = loadConfiguration(mode: .production)
    do {
        let keyID = try ProviderKeyCommand.rotate(configuration: configuration, logger: logger)
        print("new signing key \(keyID): it signs from now on; the previous keys stay published for a day")
        exit(0)
    } catch {
        fail("configuration error: \(error)", code: 1)
    }
}

func clientSecret() -> Never {
    let configuration = loadConfiguration(mode: .development)
    guard configuration.teamID != nil, configuration.keyID != nil, configuration.privateKeyPath != nil else {
        fail("configuration error: APPLE_TEAM_ID, APPLE_KEY_ID and APPLE_PRIVATE_KEY_PATH are needed to sign a client secret")
    }
    guard let clientID = arguments.options["client-id"] ?? configuration.servicesID ?? configuration.bundleIDs.first else {
        fail("name the client with --client-id (a Services ID or bundle ID)")
    }
    do {
        guard let key = try CompositionRoot.clientKey(configuration) else { fail("no client key is configured") }
        print(try ClientSecretProvider(key: key).secret(for: clientID))
        exit(0)
    } catch let error as ConfigurationError {
        fail(error.description)
    } catch {
        fail("configuration error: APPLE_PRIVATE_KEY_PATH \(error)")
    }
}

/// `members find|export|delete`: data-subject requests (access, erasure), one audit line each.
func members() -> Never {
    let request: MemberRequest
    do {
        request = try MemberRequest.parse(words: arguments.positional, options: arguments.options)
    } catch {
        fail(error.description, code: MemberRequestOutcome.Status.usage.rawValue)
    }
    let outcome = MemberRequests.run(request, configuration: loadConfiguration(mode: .production), logger: logger)
    if let output = outcome.output { print(output) }
    if let message = outcome.message { fail(message, code: outcome.status.rawValue) }
    Logger.flush()
    exit(outcome.status.rawValue)
}

/// `invite --group G [--expires DURATION]`: prints a single-use link into a group.
func invite() -> Never {
    let accepted: Set<String> = ["group", "expires", "config", "resources"]
    guard arguments.positional.isEmpty, arguments.options.keys.allSatisfy(accepted.contains) else { fail(InviteCommand.usage) }
    let configuration = loadConfiguration(mode: .production)
    do {
        print(try InviteCommand.run(configuration: configuration, group: arguments.options["group"],
                                    expires: arguments.options["expires"], logger: logger))
        Logger.flush()
        exit(0)
    } catch let error as InviteCommand.InputError {
        fail(error.description)
    } catch {
        fail(String(describing: error), code: 1)
    }
}

/// `transfer export|import`: moving the members to another Apple developer team (docs/app-transfer.md).
func transfer() -> Never {
    let configuration = loadConfiguration(mode: .production)
    let output: (String) -> Void = { FileHandle.standardOutput.write(Data(($0 + "\n").utf8)) }
    do {
        switch arguments.positional {
        case ["export"]:
            exit(try TransferCommand.export(configuration: configuration, targetTeam: arguments.options["target-team"],
                                            clientID: arguments.options["client-id"], logger: logger, output: output))
        case ["import"]:
            exit(try TransferCommand.importMembers(configuration: configuration, clientID: arguments.options["client-id"],
                                                   logger: logger, output: output))
        default:
            fail("usage: apple-signin-bridge transfer export --target-team TEAMID | transfer import [--client-id ID] [--config FILE]")
        }
    } catch let error as TransferCommand.InputError {
        fail(error.description)
    } catch {
        fail(String(describing: error), code: 1)
    }
}

/// `backup --to FILE [--force]`: the SQLite database copied while servers keep serving (docs/deployment.md#backups).
func backup() -> Never {
    guard arguments.positional.isEmpty, let destination = arguments.options["to"], !destination.isEmpty else {
        fail("usage: apple-signin-bridge backup --to FILE [--force] [--config FILE]")
    }
    let configuration = loadConfiguration(mode: .production)
    do {
        let report = try SQLiteBackup.copy(configuration.database, to: destination,
                                           overwrite: arguments.options["--force"] != nil)
        let members = report.members == 1 ? "1 member" : "\(report.members) members"
        print("backed up \(configuration.database) to \(destination): schema version \(report.schemaVersion), \(members), "
              + "\(report.bytes) bytes, integrity ok")
        exit(0)
    } catch {
        fail("backup failed: \(error)", code: 1)
    }
}

/// `webhooks list [--failed] | retry | test`: the webhook outbox (docs/webhooks.md).
func webhooks() -> Never {
    let output: (String) -> Void = { FileHandle.standardOutput.write(Data(($0 + "\n").utf8)) }
    do {
        exit(try WebhooksCommand.run(arguments.positional, failedOnly: arguments.options["--failed"] != nil,
                                     configuration: loadConfiguration(mode: .production), logger: logger, output: output))
    } catch let error as WebhooksCommand.InputError {
        fail(error.description)
    } catch {
        fail(String(describing: error), code: 1)
    }
}

/// `simulator`: the Apple ID stand-in alone, for another bridge or an operator's own code (docs/webhooks.md).
func simulator() -> Never {
    guard arguments.positional.isEmpty else { fail("usage: apple-signin-bridge simulator (its port: SIMULATOR_PORT, default 8081)") }
    ShutdownSignals.block()
    let listener = startSimulator(bridgePort: 8080, callbackDestinations: [:], returnURLs: [], anyLoopbackReturnURL: true)
    let users = SimulatedUser.defaults.map { "\($0.firstName) (sub \($0.sub))" }.joined(separator: ", ")
    FileHandle.standardOutput.write(Data(("Apple ID simulator — http://127.0.0.1:\(listener.port) (users: \(users)); "
        + "POST /__simulator/reset-first-sign-ins makes every next sign-in a first one\n").utf8))
    let signal = ShutdownSignals.wait()
    logger.info("shutting_down", ["signal": signal == SIGTERM ? "SIGTERM" : "SIGINT"])
    listener.shutdown()
    exit(0)
}

/// `notify --to URL --event TYPE --sub SUB`: Apple's server-to-server notification, signed by the running simulator.
func notify() -> Never {
    do {
        let status = try NotifyCommand.run(options: arguments.options, environment: environment) { print($0) }
        exit(status)
    } catch let error as NotifyCommand.InputError {
        fail(error.description)
    } catch {
        fail(String(describing: error), code: 1)
    }
}

switch arguments.command {
case "serve": serve()
case "dev": dev()
case "verify-token": verifyToken()
case "doctor": doctor()
case "client-secret": clientSecret()
case "keys": keys()
case "members": members()
case "transfer": transfer()
case "invite": invite()
case "backup": backup()
case "webhooks": webhooks()
case "simulator": simulator()
case "notify": notify()
default: fail("unknown command \"\(arguments.command)\"; try apple-signin-bridge --help")
}
