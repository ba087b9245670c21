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
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD", "CMicroHTTPDShims", "WorkerThreads", "Locking", "TextBytes"]),
        .target(name: "JSON"),
        .target(name: "JOSE", dependencies: ["JSON", "COpenSSL", "COpenSSLSetup", "Locking"]),
        .target(name: "Mustache"),
        // A VFS in front of SQLite's default one that writes a transaction's WAL frames in one system call.
        .target(name: "CSQLiteWALBuffer", dependencies: ["CSQLite"]),
        // SQLite's own page cache behind a wrapper that skips the end-of-transaction truncations that remove nothing.
        .target(name: "CSQLitePageCache", dependencies: ["CSQLite"]),
        .target(name: "Storage", dependencies: ["CSQLite", "CSQLiteWALBuffer", "CSQLitePageCache", "CLibPQ", "COpenSSLSetup", "WorkerThreads", "Locking"]),
        .target(name: "AppleID", dependencies: ["JSON", "JOSE", "Locking", "TextBytes"]),
        .target(name: "AppleIDSimulator", dependencies: ["HTTPServer", "JSON", "JOSE", "Mustache", "Locking"]),
        // Page languages: catalogs, Accept-Language negotiation, plural rules, per-language dates and numbers.
        .target(name: "Localization"),
        // The OpenID provider's HTTP-free rules: clients, redirect URIs, PKCE, requests, discovery, tokens.
        .target(name: "OpenIDProvider", dependencies: ["JSON", "JOSE", "TextBytes"]),
        .target(name: "Bridge", dependencies: ["HTTPServer", "JSON", "JOSE", "AppleID", "Storage", "Mustache", "Localization",
                                               "OpenIDProvider", "Locking", "TextBytes"]),
        .executableTarget(name: "apple-signin-bridge",
                          dependencies: ["Bridge", "AppleIDSimulator", "HTTPServer", "AppleID", "JSON", "JOSE", "Storage"]),

        // Benchmarks (scripts/bench), not tests.
        .executableTarget(name: "jose-bench", dependencies: ["JSON", "JOSE"], path: "Benchmarks/jose-bench"),
        .executableTarget(name: "bridge-bench",
                          dependencies: ["Bridge", "AppleID", "AppleIDSimulator", "HTTPServer", "JSON", "JOSE", "TestSupport"],
                          path: "Benchmarks/bridge-bench"),
        // Prepares single-use sign-ins and checks their sessions for `scripts/bench signin` (wrk drives the load).
        .executableTarget(name: "signin-bench", dependencies: ["AppleIDSimulator", "HTTPServer", "JOSE", "TestSupport"],
                          path: "Benchmarks/signin-bench"),
        .executableTarget(name: "store-bench", dependencies: ["Storage"], path: "Benchmarks/store-bench"),
        // Prints the sign-in's statements for pgbench from the store's declarations (`scripts/bench signin`).
        .executableTarget(name: "signin-sql", dependencies: ["Storage"], path: "Benchmarks/signin-sql"),

        // Test helpers: a raw HTTP client, server launchers, child processes, HTML checks through libxml2.
        .target(name: "CHTMLQuery", dependencies: ["CLibXML2"]),
        .target(name: "CChildProcess"),
        // Exits while threads sign and verify (JOSETests.ExitWhileBusy).
        .executableTarget(name: "jose-exit-check", dependencies: ["JOSE"], path: "Tests/JOSEExitCheck"),
        .target(name: "TestSupport", dependencies: ["CHTMLQuery", "CChildProcess"]),

        .testTarget(name: "TextBytesTests", dependencies: ["TextBytes"]),
        .testTarget(name: "LockingTests", dependencies: ["Locking"]),
        .testTarget(name: "WorkerThreadsTests", dependencies: ["WorkerThreads"]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "TestSupport"]),
        .testTarget(name: "MustacheTests", dependencies: ["Mustache"]),
        .testTarget(name: "JSONTests", dependencies: ["JSON"]),
        .testTarget(name: "JOSETests", dependencies: ["JSON", "JOSE", "TestSupport"]),
        .testTarget(name: "StorageTests", dependencies: ["Storage", "TestSupport"]),
        .testTarget(name: "AppleIDTests", dependencies: ["AppleID", "AppleIDSimulator", "HTTPServer", "JSON", "JOSE", "TestSupport"]),
        .testTarget(name: "AppleIDSimulatorTests", dependencies: ["AppleIDSimulator", "TestSupport", "HTTPServer", "JSON", "JOSE"]),
        .testTarget(name: "LocalizationTests", dependencies: ["Localization"]),
        .testTarget(name: "BridgeTests",
                    dependencies: ["Bridge", "AppleID", "AppleIDSimulator", "HTTPServer", "JSON", "JOSE", "Storage", "TestSupport",
                                   "OpenIDProvider"]),
        .testTarget(name: "OpenIDProviderTests", dependencies: ["OpenIDProvider", "JSON", "JOSE"]),
        .testTarget(name: "PagesTests", dependencies: ["Bridge", "Localization", "Mustache", "HTTPServer", "TestSupport"]),
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
