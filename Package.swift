// swift-tools-version:6.0
import Foundation
import PackageDescription

let package = Package(
    name: "AppleSignInBridge",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "apple-signin-bridge", targets: ["apple-signin-bridge"]),
    ],
    targets: [
        // C libraries from Debian, one systemLibrary each.
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd",
                       providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl",
                       providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CLibXML2", pkgConfig: "libxml-2.0",
                       providers: [.apt(["libxml2-dev"])]),
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq",
                       providers: [.apt(["libpq-dev"])]),
        // Initializes OpenSSL before main without its exit-time cleanup, which crashes threads still inside OpenSSL.
        .target(name: "COpenSSLSetup", dependencies: ["COpenSSL"]),
        // Fixed-arity wrappers for the variadic parts of libmicrohttpd.
        .target(name: "CMicroHTTPDShims", dependencies: ["CMicroHTTPD"]),

        // The lock the product's modules share (a plain pthread mutex; see Lock.swift for why not `Mutex`).
        .target(name: "Locking"),
        // Text compared as UTF-8 bytes, where a rule must not use canonical equivalence.
        .target(name: "TextBytes"),
        .target(name: "WorkerThreads"),
        // Structured one-line log events (logfmt), written to standard error in batches.
        .target(name: "Logging", dependencies: ["WorkerThreads"]),
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD", "CMicroHTTPDShims", "WorkerThreads", "Locking", "TextBytes", "Logging"]),
        .target(name: "JSON"),
        .target(name: "JOSE", dependencies: ["JSON", "COpenSSL", "COpenSSLSetup", "Locking"]),
        .target(name: "Mustache"),
        // A VFS in front of SQLite's default one that writes a transaction's WAL frames in one system call.
        .target(name: "CSQLiteWALBuffer", dependencies: ["CSQLite"]),
        // SQLite's own page cache behind a wrapper that skips the end-of-transaction truncations that remove nothing.
        .target(name: "CSQLitePageCache", dependencies: ["CSQLite"]),
        .target(name: "Storage", dependencies: ["CSQLite", "CSQLiteWALBuffer", "CSQLitePageCache", "CLibPQ", "COpenSSLSetup", "WorkerThreads", "Locking"]),
        .target(name: "AppleID", dependencies: ["JSON", "JOSE", "Locking", "TextBytes"]),
        .target(name: "AppleIDSimulator", dependencies: ["HTTPServer", "Logging", "JSON", "JOSE", "Mustache", "Locking"]),
        // Page languages: catalogs, Accept-Language negotiation, plural rules, per-language dates and numbers.
        .target(name: "Localization"),
        // The OpenID provider's HTTP-free rules: clients, redirect URIs, PKCE, requests, discovery, tokens.
        .target(name: "OpenIDProvider", dependencies: ["JSON", "JOSE", "TextBytes"]),
        // Webhooks to the operator's backend: events written to the store's outbox, signed (Standard Webhooks), delivered.
        .target(name: "Webhooks", dependencies: ["JSON", "JOSE", "Storage", "Locking"]),
        // The application, in rooms the compiler keeps (docs/architecture.md): settings and metrics are leaves, the
        // sign-in knows no HTTP, the web routes do not know the OpenID provider's, and only the composition sees all.
        .target(name: "BridgeSettings", dependencies: ["Webhooks", "Storage", "OpenIDProvider", "JOSE"]),
        .target(name: "BridgeMetrics", dependencies: ["Locking", "TextBytes"]),
        .target(name: "SignIn", dependencies: ["BridgeSettings", "BridgeMetrics", "Webhooks", "Logging",
                                               "AppleID", "Storage", "OpenIDProvider", "JSON", "JOSE", "Locking",
                                               "TextBytes"]),
        .target(name: "WebPresentation", dependencies: ["SignIn", "BridgeSettings", "BridgeMetrics", "Logging",
                                                        "HTTPServer", "AppleID", "Storage", "Mustache", "Localization",
                                                        "JSON", "JOSE"]),
        .target(name: "WebRoutes", dependencies: ["WebPresentation", "SignIn", "BridgeSettings", "BridgeMetrics",
                                                  "Webhooks", "Logging", "HTTPServer", "AppleID", "Storage",
                                                  "OpenIDProvider", "Mustache", "Localization", "JSON", "JOSE", "Locking",
                                                  "TextBytes"]),
        .target(name: "ProviderRoutes", dependencies: ["WebRoutes", "WebPresentation", "SignIn", "BridgeSettings",
                                                       "BridgeMetrics", "Logging", "HTTPServer", "AppleID", "Storage",
                                                       "OpenIDProvider", "Mustache", "JSON", "JOSE", "TextBytes"]),
        .target(name: "Bridge", dependencies: ["ProviderRoutes", "WebRoutes", "WebPresentation", "SignIn",
                                               "BridgeSettings", "BridgeMetrics", "Webhooks", "Logging", "HTTPServer",
                                               "AppleID", "Storage", "OpenIDProvider", "JOSE"]),
        .target(name: "OperatorCommands", dependencies: ["WebRoutes", "SignIn", "BridgeSettings", "BridgeMetrics",
                                                         "Bridge", "Webhooks", "Logging", "AppleID", "Storage",
                                                         "Localization", "JSON"]),
        .executableTarget(name: "apple-signin-bridge",
                          dependencies: ["Bridge", "OperatorCommands", "BridgeSettings", "Logging", "AppleIDSimulator", "HTTPServer", "AppleID",
                                         "JSON", "JOSE", "Storage", "Webhooks"]),

        // Benchmarks (scripts/bench), not tests.
        .executableTarget(name: "jose-bench", dependencies: ["JSON", "JOSE"], path: "Benchmarks/jose-bench"),
        .executableTarget(name: "bridge-bench",
                          dependencies: ["Bridge", "BridgeSettings", "AppleID", "AppleIDSimulator", "HTTPServer", "JSON", "JOSE",
                                         "TestSupport"],
                          path: "Benchmarks/bridge-bench"),
        // Prepares single-use sign-ins and checks their sessions for `scripts/bench signin` (wrk drives the load).
        .executableTarget(name: "signin-bench", dependencies: ["AppleIDSimulator", "HTTPServer", "JOSE", "TestSupport"],
                          path: "Benchmarks/signin-bench"),
        .executableTarget(name: "store-bench", dependencies: ["Storage"], path: "Benchmarks/store-bench"),
        // Prints the sign-in's statements for pgbench from the store's declarations (`scripts/bench signin`).
        .executableTarget(name: "signin-sql", dependencies: ["Storage"], path: "Benchmarks/signin-sql"),

        // Test helpers: a raw HTTP client, server launchers, child processes, HTML checks through libxml2, the test clock,
        // the running Apple ID simulator and free loopback ports.
        .target(name: "CHTMLQuery", dependencies: ["CLibXML2"]),
        .target(name: "CChildProcess"),
        // Exits while threads sign and verify (JOSETests.ExitWhileBusy).
        .executableTarget(name: "jose-exit-check", dependencies: ["JOSE"], path: "Tests/JOSEExitCheck"),
        .target(name: "TestSupport",
                dependencies: ["CHTMLQuery", "CChildProcess", "AppleID", "AppleIDSimulator", "HTTPServer", "JSON", "JOSE"]),

        .testTarget(name: "TextBytesTests", dependencies: ["TextBytes"]),
        .testTarget(name: "LockingTests", dependencies: ["Locking"]),
        .testTarget(name: "WorkerThreadsTests", dependencies: ["WorkerThreads"]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "Logging", "TestSupport"]),
        .testTarget(name: "MustacheTests", dependencies: ["Mustache"]),
        .testTarget(name: "JSONTests", dependencies: ["JSON"]),
        .testTarget(name: "JOSETests", dependencies: ["JSON", "JOSE", "TestSupport"]),
        .testTarget(name: "StorageTests", dependencies: ["Storage", "TestSupport"]),
        .testTarget(name: "WebhooksTests", dependencies: ["Webhooks", "Storage", "JSON", "JOSE", "TestSupport"]),
        .testTarget(name: "AppleIDTests", dependencies: ["AppleID", "AppleIDSimulator", "HTTPServer", "JSON", "JOSE", "TestSupport"]),
        .testTarget(name: "AppleIDSimulatorTests", dependencies: ["AppleIDSimulator", "TestSupport", "HTTPServer", "JSON", "JOSE"]),
        .testTarget(name: "LocalizationTests", dependencies: ["Localization"]),
        .testTarget(name: "BridgeTests",
                    dependencies: ["Bridge", "OperatorCommands", "ProviderRoutes", "WebRoutes", "WebPresentation", "SignIn",
                                   "BridgeSettings", "BridgeMetrics", "Logging", "AppleID", "AppleIDSimulator", "HTTPServer", "JSON",
                                   "JOSE", "Storage", "TestSupport", "OpenIDProvider", "Webhooks"]),
        .testTarget(name: "OpenIDProviderTests", dependencies: ["OpenIDProvider", "JSON", "JOSE"]),
        .testTarget(name: "PagesTests", dependencies: ["Bridge", "WebPresentation", "Logging", "Localization", "Mustache", "HTTPServer",
                                                        "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)

// --- Fuzz targets (scripts/fuzz) ---------------------------------------------------------------------------
// Declared only when scripts/fuzz builds them (with libFuzzer and AddressSanitizer, in .build-fuzz), so the
// normal build and tests never see them. Each target names the product modules it fuzzes: when code moves to
// another module, change the module name here.
if Context.environment["ASB_FUZZ_TARGETS"] == "1" {
    let fuzzTargets: [(name: String, folder: String, modules: [String])] = [
        ("FuzzJSON", "JSON", ["JSON"]),
        ("FuzzJWS", "JWS", ["JSON", "JOSE", "AppleID"]),
        ("FuzzForms", "Forms", ["HTTPServer"]),
        ("FuzzRequest", "Request", ["HTTPServer"]),
        ("FuzzMustache", "Mustache", ["Mustache"]),
    ]
    package.targets.append(.target(name: "CFuzzDriver", path: "Fuzz/Driver"))
    for target in fuzzTargets {
        // Corpus, reproducers and a libFuzzer dictionary live beside the code; SwiftPM warns about excluding a folder
        // that is absent.
        let folder = Context.packageDirectory + "/Fuzz/" + target.folder
        let dictionaries = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".dict") }
        let data = ["corpus", "crashes"].filter { FileManager.default.fileExists(atPath: folder + "/" + $0) } + dictionaries
        package.targets.append(.executableTarget(
            name: target.name, dependencies: (target.modules + ["CFuzzDriver"]).map { .target(name: $0) },
            path: "Fuzz/" + target.folder, exclude: data))
    }
}
