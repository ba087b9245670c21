import AppleIDSimulator
import Bridge
import HTTPServer
import Foundation
import Testing
import TestSupport

/// The built `apple-signin-bridge` binary, beside the test bundle in the build folder.
func executablePath() throws -> String {
    try builtExecutable(named: "apple-signin-bridge")
}

/// Runs the executable with exactly `environment`, returning exit status and both outputs.
final class RunningProcess {
    let process: ChildProcess

    init(_ arguments: [String], environment: [String: String], directory: String = packageRoot,
         resources: String? = nil) throws {
        process = try ChildProcess(executable: try executablePath(),
                                   arguments: arguments + (resources.map { ["--resources", $0] } ?? []),
                                   environment: environment.merging(["PATH": "/usr/bin:/bin"]) { current, _ in current },
                                   directory: directory)
    }

    func wait() -> (status: Int32, output: String, errors: String) {
        let out = process.standardOutput?.readDataToEndOfFile() ?? Data()
        let err = process.standardError?.readDataToEndOfFile() ?? Data()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }
}

/// Everything a pipe delivers, read on a thread of its own while the process runs.
final class CollectedOutput: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()

    init(_ handle: FileHandle) {
        Thread { [self] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { return }
                lock.lock(); data.append(chunk); lock.unlock()
            }
        }.start()
    }

    var text: String {
        lock.lock(); defer { lock.unlock() }
        return String(decoding: data, as: UTF8.self)
    }
}

@Suite("The apple-signin-bridge executable", .serialized)
struct ExecutableTests {
    func validEnvironment(port: Int, directory: String) -> [String: String] {
        [
            "BRIDGE_PORT": String(port), "BRIDGE_DATABASE": "sqlite:\(directory)/bridge.sqlite3",
            "BRIDGE_SECRET_KEY": Data(repeating: 7, count: 32).base64EncodedString(),
            // Loopback with nothing listening: tests never reach out to the real Apple. Plain http, as a local
            // stand-in for Apple would be: serve accepts it on loopback only.
            "APPLE_SERVICES_ID": "com.example.web", "APPLE_ID_URL": "http://127.0.0.1:9",
        ]
    }

    func temporaryDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("exe-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test("--version and --help answer and exit 0")
    func versionAndHelp() throws {
        let version = try RunningProcess(["--version"], environment: [:]).wait()
        #expect(version.status == 0)
        #expect(version.output.hasPrefix("apple-signin-bridge "))
        let help = try RunningProcess(["--help"], environment: [:]).wait()
        #expect(help.status == 0)
        #expect(help.output.contains("serve"))
        #expect(help.output.contains("verify-token"))
    }

    @Test("a malformed setting stops start-up with one line naming the key", arguments: [
        ("BRIDGE_PORT", "eighty", "configuration error: BRIDGE_PORT"),
        ("BRIDGE_SECRET_KEY", "c2hvcnQ=", "configuration error: BRIDGE_SECRET_KEY"),
        ("BRIDGE_DATABASE", "mysql://db", "configuration error: BRIDGE_DATABASE"),
        ("APPLE_ID_URL", "http://appleid.example", "configuration error: APPLE_ID_URL"),
        ("APPLE_JS_SDK", "maybe", "configuration error: APPLE_JS_SDK"),
        ("APPLE_JS_POPUP", "maybe", "configuration error: APPLE_JS_POPUP"),
        ("APPLE_JS_POPUP", "1", "configuration error: APPLE_JS_POPUP is 1 but APPLE_JS_SDK is not"),
        ("APPLE_TEAM_ID", "ABCDE12345", "configuration error: APPLE_KEY_ID"),
        ("APPLE_ID_URL", "http://127.0.0.1.example.com", "configuration error: APPLE_ID_URL"),
        ("APPLE_REQUIRE_NONCE", "maybe", "configuration error: APPLE_REQUIRE_NONCE"),
        ("BRIDGE_TRUSTED_PROXIES", "10.0.0.0/40", "configuration error: BRIDGE_TRUSTED_PROXIES"),
        ("BRIDGE_CORS_ORIGINS", "https://app.example.com/", "configuration error: BRIDGE_CORS_ORIGINS"),
        ("BRIDGE_METRICS_TOKEN", "short", "configuration error: BRIDGE_METRICS_TOKEN"),
    ])
    func configurationErrors(key: String, value: String, expected: String) throws {
        var environment = validEnvironment(port: freeLoopbackPort(), directory: try temporaryDirectory())
        environment[key] = value
        let result = try RunningProcess(["serve"], environment: environment).wait()
        #expect(result.status != 0)
        let lines = result.errors.split(separator: "\n")
        #expect(lines.count == 1, "stderr: \(result.errors)")
        #expect(lines.first?.hasPrefix(expected) == true, "stderr: \(result.errors)")
    }

    @Test("a mistyped option is refused instead of ignored")
    func unknownOption() throws {
        let result = try RunningProcess(["serve", "--conifg", "bridge.env"], environment: [:]).wait()
        #expect(result.status == 2)
        #expect(result.errors == "unknown option --conifg; try apple-signin-bridge --help\n")
    }

    @Test("a port already in use stops start-up with one line naming BRIDGE_PORT")
    func portInUse() throws {
        let directory = try temporaryDirectory()
        let port = freeLoopbackPort()
        let first = try RunningProcess(["serve"], environment: validEnvironment(port: port, directory: directory))
        defer { kill(first.process.processIdentifier, SIGTERM); _ = first.wait() }
        for _ in 0..<100 where (try? RawHTTPClient.request(port: port, path: "/healthz")) == nil { usleep(50_000) }
        let second = try RunningProcess(["serve"], environment: validEnvironment(port: port, directory: try temporaryDirectory())).wait()
        #expect(second.status == 1)
        let lines = second.errors.split(separator: "\n").filter { !$0.hasPrefix("time=") }
        #expect(lines == ["configuration error: BRIDGE_PORT \(port) cannot be listened on at 127.0.0.1 (in use by another program, or not allowed)"])
    }

    @Test("a missing secret key stops `serve` with one line naming it")
    func missingSecret() throws {
        var environment = validEnvironment(port: freeLoopbackPort(), directory: try temporaryDirectory())
        environment["BRIDGE_SECRET_KEY"] = nil
        let result = try RunningProcess(["serve"], environment: environment).wait()
        #expect(result.status != 0)
        #expect(result.errors.hasPrefix("configuration error: BRIDGE_SECRET_KEY is missing"))
    }

    @Test("--config FILE adds keys; the environment wins")
    func configFile() throws {
        let directory = try temporaryDirectory()
        let file = directory + "/bridge.env"
        try "# settings\nBRIDGE_PORT=notaport\nAPPLE_JS_SDK=perhaps\n".write(toFile: file, atomically: true, encoding: .utf8)
        var environment = validEnvironment(port: freeLoopbackPort(), directory: directory)
        let result = try RunningProcess(["serve", "--config", file], environment: environment).wait()
        #expect(result.errors.hasPrefix("configuration error: APPLE_JS_SDK"), "stderr: \(result.errors)")
        environment["APPLE_JS_SDK"] = "0"
        try "TYPO_KEY=1\n".write(toFile: file, atomically: true, encoding: .utf8)
        let typo = try RunningProcess(["serve", "--config", file], environment: environment).wait()
        #expect(typo.errors.hasPrefix("configuration error: TYPO_KEY"), "stderr: \(typo.errors)")
    }

    @Test("serve answers /healthz, logs without secrets, and exits 0 on SIGTERM")
    func serveAndTerminate() throws {
        let directory = try temporaryDirectory()
        let port = freeLoopbackPort()
        let running = try RunningProcess(["serve"], environment: validEnvironment(port: port, directory: directory))
        var health: RawHTTPResponse?
        for _ in 0..<100 where health == nil {
            health = try? RawHTTPClient.request(port: port, path: "/healthz")
            if health == nil { usleep(50_000) }
        }
        #expect(health?.status == 200)
        #expect(health?.text == "{\"status\":\"ok\"}")
        _ = try? RawHTTPClient.request(port: port, method: "POST", path: "/apple_redirect?state=s3cr3t-state&id_token=eyJsecret",
                                       headers: [("Cookie", "asb_session=cookie-secret")])
        kill(running.process.processIdentifier, SIGTERM)
        let result = running.wait()
        #expect(result.status == 0)
        #expect(result.errors.contains("event=listening"))
        #expect(result.errors.contains("event=request method=GET path=/healthz status=200"))
        #expect(result.errors.contains("path=/apple_redirect"))
        #expect(!result.errors.contains("s3cr3t-state"))
        #expect(!result.errors.contains("eyJsecret"))
        #expect(!result.errors.contains("cookie-secret"))
        #expect(FileManager.default.fileExists(atPath: directory + "/bridge.sqlite3"))
    }

    @Test("request lines reach standard error while the server runs, not only when it stops")
    func logLinesWhileRunning() throws {
        let directory = try temporaryDirectory()
        let port = freeLoopbackPort()
        let running = try RunningProcess(["serve"], environment: validEnvironment(port: port, directory: directory))
        let collected = CollectedOutput(running.process.standardError!)
        defer {
            kill(running.process.processIdentifier, SIGTERM)
            running.process.waitUntilExit()
        }
        var health: RawHTTPResponse?
        for _ in 0..<100 where health == nil {
            health = try? RawHTTPClient.request(port: port, path: "/healthz")
            if health == nil { usleep(50_000) }
        }
        #expect(health?.status == 200)
        for _ in 0..<20 { _ = try RawHTTPClient.request(port: port, path: "/healthz") }
        // Lines are written in batches a few milliseconds apart; a second is far more than a batch takes.
        let deadline = Date().addingTimeInterval(1)
        var lines = 0
        repeat {
            usleep(20_000)
            lines = collected.text.components(separatedBy: "event=request method=GET path=/healthz status=200").count - 1
        } while lines < 21 && Date() < deadline
        #expect(lines >= 21, "request lines seen while running: \(lines)")
        #expect(!collected.text.contains("\n\n"), "every line whole")
    }

    @Test("dev runs the server with the simulator: a browser can sign in with no Apple account")
    func devMode() throws {
        let directory = try temporaryDirectory()
        let port = freeLoopbackPort()
        let simulatorPort = freeLoopbackPort()
        let running = try RunningProcess(["dev"], environment: [
            "BRIDGE_PORT": String(port), "SIMULATOR_PORT": String(simulatorPort),
            "BRIDGE_DATABASE": "sqlite:\(directory)/dev.sqlite3",
        ], directory: directory, resources: packageRoot)
        defer { kill(running.process.processIdentifier, SIGTERM); _ = running.wait() }
        var login: RawHTTPResponse?
        for _ in 0..<100 where login == nil {
            login = try? RawHTTPClient.request(port: port, path: "/login")
            if login == nil { usleep(50_000) }
        }
        let page = HTMLDocument(try #require(login).text)
        let href = try #require(page.first("//a[@id='apple-signin']")?.attributes["href"])
        #expect(href.hasPrefix("http://127.0.0.1:\(simulatorPort)/auth/authorize?client_id=dev.applesigninbridge.web&"))
        let consent = try RawHTTPClient.request(port: simulatorPort, path: String(href.dropFirst("http://127.0.0.1:\(simulatorPort)".count)))
        #expect(consent.status == 200)
        #expect(HTMLDocument(consent.text).text.contains("Ada Lovelace"))
        // The development secret is generated under data/ of the working directory, readable by its owner only.
        let attributes = try FileManager.default.attributesOfItem(atPath: directory + "/data/dev-secret.key")
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
    }

    @Test("verify-token prints the verified claims, or the exact reason it fails")
    func verifyToken() throws {
        let running = try RunningSimulator()
        defer { withExtendedLifetime(running) {} }  // keep it listening until the test ends
        let simulator = running.simulator
        let environment = ["APPLE_ID_URL": running.url, "APPLE_BUNDLE_IDS": "com.example.app"]
        let token = try simulator.mintIdentityToken(IdentityTokenClaims(audience: "com.example.app", subject: "001.verify.me",
                                                                        nonce: "n0nce", email: "v@example.com"))
        let good = try RunningProcess(["verify-token", token, "--nonce", "n0nce"], environment: environment).wait()
        #expect(good.status == 0, "stderr: \(good.errors)")
        #expect(good.output.contains("sub:              001.verify.me"))
        #expect(good.output.contains("nonce verified:   true"))
        #expect(!good.output.contains(token))

        let bad = try RunningProcess(["verify-token", token, "--nonce", "other"], environment: environment).wait()
        #expect(bad.status == 1)
        #expect(bad.errors.hasPrefix("invalid (nonce_mismatch): the token's nonce does not match this sign-in"))
        #expect(!bad.errors.contains(token))
    }
}
