// Helper for `scripts/bench signin`, which drives the real release binary with wrk.
//
//   signin-bench prepare --bridge PORT --count N --files T --out DIR [--workers W]
//       Starts the local stand-in for Apple on a free loopback port and writes it to DIR/simulator-port (point
//       the server's APPLE_ID_URL there), waits for the server on PORT, then makes N single-use sign-ins
//       through real `GET /login` requests and writes them as raw `POST /apple_redirect` requests into
//       DIR/requests.1 … DIR/requests.T (one file per wrk thread), touches DIR/ready and keeps serving Apple's
//       keys until it is terminated.
//   signin-bench verify --bridge PORT --count N --prefix P [--sample K] [--workers W] COOKIE-FILE…
//       Opens GET /session with every (or K random) session cookie from the files and prints how many
//       answered 200 for a distinct user this run signed in: `checked=C worked=W`.
import AppleIDSimulator
import Foundation
import HTTPServer

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data(("signin-bench: " + message + "\n").utf8))
    exit(2)
}

struct Options {
    var values: [String: String] = [:]
    var positional: [String] = []

    init(_ arguments: ArraySlice<String>) {
        var rest = arguments
        while let argument = rest.popFirst() {
            if argument.hasPrefix("--") {
                guard let value = rest.popFirst() else { fail("\(argument) needs a value") }
                values[String(argument.dropFirst(2))] = value
            } else {
                positional.append(argument)
            }
        }
    }

    func int(_ name: String, default fallback: Int? = nil) -> Int {
        if let text = values[name] {
            guard let value = Int(text), value >= 0 else { fail("--\(name) must be a number") }
            return value
        }
        guard let fallback else { fail("--\(name) is required") }
        return fallback
    }

    func string(_ name: String) -> String {
        guard let value = values[name] else { fail("--\(name) is required") }
        return value
    }
}

/// Waits until the server answers /healthz, for up to a minute.
func waitForServer(port: Int) {
    let connection = KeepAliveConnection(port: port)
    let request = Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n".utf8)
    for _ in 0..<600 {
        if let answer = try? connection.exchange(request), answer.status == 200 { return }
        usleep(100_000)
    }
    fail("the server on port \(port) did not answer /healthz within a minute")
}

func prepare(_ options: Options) -> Never {
    let directory = options.string("out")
    let cores = ProcessInfo.processInfo.activeProcessorCount
    do {
        let simulator = try AppleIDStandIn()
        let listener = MicroHTTPDListener(configuration: ServerConfiguration(host: "127.0.0.1", port: 0),
                                  responder: simulator, logger: .silent)
        try listener.start()
        try "\(listener.port)\n".write(toFile: directory + "/simulator-port.tmp", atomically: false, encoding: .utf8)
        rename(directory + "/simulator-port.tmp", directory + "/simulator-port")
        let bridgePort = options.int("bridge")
        waitForServer(port: bridgePort)
        let preparation = Preparation(
            bridgePort: bridgePort, count: options.int("count"), files: max(1, options.int("files", default: 2)),
            workers: max(1, options.int("workers", default: 4 * cores)), directory: directory,
            servicesID: options.values["services-id"] ?? "dev.applesigninbridge.web",
            subjectPrefix: options.string("prefix"))
        try preparation.run(simulator: simulator)
        _ = FileManager.default.createFile(atPath: directory + "/ready", contents: nil)
        while true { sleep(3600) }  // keeps serving the keys; the script terminates this process
    } catch {
        fail("\(error)")
    }
}

func verify(_ options: Options) -> Never {
    var cookies: [String] = []
    for path in options.positional {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { fail("cannot read \(path)") }
        cookies += text.split(separator: "\n").map(String.init)
    }
    let sample = options.int("sample", default: 0)
    if sample > 0 && sample < cookies.count {
        cookies = Array(cookies.shuffled().prefix(sample))
    }
    let cores = ProcessInfo.processInfo.activeProcessorCount
    let outcome = Verification(bridgePort: options.int("bridge"), cookies: cookies,
                               workers: max(1, options.int("workers", default: 4 * cores)),
                               subjectPrefix: options.string("prefix"), count: options.int("count")).run()
    print("checked=\(outcome.checked) worked=\(outcome.worked)")
    if let problem = outcome.firstProblem {
        print("first problem: \(problem)")
    }
    exit(0)
}

let arguments = CommandLine.arguments.dropFirst()
switch arguments.first {
case "prepare": prepare(Options(arguments.dropFirst()))
case "verify": verify(Options(arguments.dropFirst()))
default: fail("usage: signin-bench prepare|verify … (see Benchmarks/signin-bench/main.swift)")
}
