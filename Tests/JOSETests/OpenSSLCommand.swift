import Foundation
import TestSupport

/// Runs the `openssl` command-line tool, to check our output against an independent implementation.
enum OpenSSLCommand {
    struct Result {
        let status: Int32
        let output: String
    }

    static var isAvailable: Bool {
        (try? run(["version"]))?.status == 0
    }

    @discardableResult
    static func run(_ arguments: [String]) throws -> Result {
        let process = try ChildProcess(executable: "/usr/bin/env", arguments: ["openssl"] + arguments,
                                       environment: ProcessInfo.processInfo.environment, standardError: .standardOutput)
        let data = process.standardOutput?.readDataToEndOfFile() ?? Data()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }

    /// A fresh temporary directory, removed after `body`.
    static func withTemporaryDirectory<R>(_ body: (URL) throws -> R) throws -> R {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("jose-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        return try body(directory)
    }
}
