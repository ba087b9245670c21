import Foundation

/// Finds the folder holding `Templates/` and `Public/`: the working directory when it has them, otherwise the
/// nearest ancestor of the executable that does (so `.build/debug/apple-signin-bridge` works from anywhere).
public enum ResourceLocator {
    public static func find(explicit: String? = nil) -> String? {
        if let explicit { return isResources(explicit) ? explicit : nil }
        let cwd = FileManager.default.currentDirectoryPath
        if isResources(cwd) { return cwd }
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        while url.path != "/" {
            if isResources(url.path) { return url.path }
            url.deleteLastPathComponent()
        }
        return nil
    }

    package static func isResources(_ path: String) -> Bool {
        FileManager.default.fileExists(atPath: path + "/Templates/login.mustache")
            && FileManager.default.fileExists(atPath: path + "/Public")
    }
}
