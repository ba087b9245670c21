import Foundation

/// The path of an executable this package builds (`apple-signin-bridge`, `jose-exit-check`): beside the test bundle
/// in the build folder, or else in `.build/debug`.
public func builtExecutable(named name: String) throws -> String {
    var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    while url.path != "/" {
        let candidate = url.appendingPathComponent(name).path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        url.deleteLastPathComponent()
    }
    let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    let fallback = packageRoot + "/.build/debug/" + name
    guard FileManager.default.isExecutableFile(atPath: fallback) else {
        throw ChildProcessError("\(name) is not built (swift build builds it)")
    }
    return fallback
}
