// swift-tools-version:6.0
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
        // Fixed-arity wrappers for the variadic parts of libmicrohttpd.
        .target(name: "CMicroHTTPDShims", dependencies: ["CMicroHTTPD"]),

        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD", "CMicroHTTPDShims"]),
        .target(name: "JOSE", dependencies: ["COpenSSL"]),
        .target(name: "Mustache"),
        .target(name: "Storage", dependencies: ["CSQLite"]),
        .target(name: "AppleID", dependencies: ["JOSE"]),
        .target(name: "AppleIDSimulator", dependencies: ["HTTPServer", "JOSE"]),
        .target(name: "Bridge", dependencies: ["HTTPServer", "JOSE", "AppleID", "Storage", "Mustache"]),
        .executableTarget(name: "apple-signin-bridge",
                          dependencies: ["Bridge", "AppleIDSimulator", "HTTPServer", "AppleID", "JOSE"]),

        // Benchmarks (scripts/bench), not tests.
        .executableTarget(name: "jose-bench", dependencies: ["JOSE"], path: "Benchmarks/jose-bench"),
        .executableTarget(name: "bridge-bench",
                          dependencies: ["Bridge", "AppleID", "AppleIDSimulator", "HTTPServer", "JOSE", "TestSupport"],
                          path: "Benchmarks/bridge-bench"),
        .executableTarget(name: "store-bench", dependencies: ["Storage"], path: "Benchmarks/store-bench"),

        // Test helpers: a raw HTTP client, server launchers, HTML checks through libxml2.
        .target(name: "CHTMLQuery", dependencies: ["CLibXML2"]),
        .target(name: "TestSupport", dependencies: ["CHTMLQuery"]),

        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "TestSupport"]),
        .testTarget(name: "MustacheTests", dependencies: ["Mustache"]),
        .testTarget(name: "JOSETests", dependencies: ["JOSE"]),
        .testTarget(name: "StorageTests", dependencies: ["Storage"]),
        .testTarget(name: "AppleIDTests", dependencies: ["AppleID", "AppleIDSimulator", "HTTPServer", "JOSE", "TestSupport"]),
        .testTarget(name: "AppleIDSimulatorTests", dependencies: ["AppleIDSimulator", "TestSupport", "HTTPServer", "JOSE"]),
        .testTarget(name: "BridgeTests",
                    dependencies: ["Bridge", "AppleID", "AppleIDSimulator", "HTTPServer", "JOSE", "Storage", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
