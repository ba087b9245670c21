import Foundation

/// The operator's logo (`BRIDGE_SITE_LOGO`), read once at start-up: a file under `Public/` is linked where the
/// static files already serve it; a file elsewhere (an absolute path) is kept in memory and served at `/site-logo`.
package struct SiteLogo: Sendable {
    package static let maximumSize = 512 * 1024
    package static let servedPath = "/site-logo"

    /// The same-origin address the header's `<img>` uses.
    package let url: String
    /// Bytes to serve at `servedPath`; nil when the static files serve it.
    package let served: (body: [UInt8], contentType: String)?

    package init(url: String, served: (body: [UInt8], contentType: String)?) {
        self.url = url
        self.served = served
    }

    package static func load(_ setting: String?, publicDirectory: String) throws(ConfigurationError) -> SiteLogo? {
        guard let setting else { return nil }
        let isAbsolute = setting.hasPrefix("/")
        let relative = setting.hasPrefix("Public/") ? String(setting.dropFirst("Public/".count)) : setting
        if !isAbsolute, relative.split(separator: "/").contains("..") {
            throw ConfigurationError("BRIDGE_SITE_LOGO", "must name a file under Public/ or an absolute path")
        }
        let path = isAbsolute ? setting : publicDirectory + "/" + relative
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError("BRIDGE_SITE_LOGO", "names \(path), which cannot be read")
        }
        guard !data.isEmpty, data.count <= maximumSize else {
            throw ConfigurationError("BRIDGE_SITE_LOGO", "names a file of \(data.count) bytes; it must be 1 to \(maximumSize)")
        }
        let type = SiteSettings.logoTypes[(path as NSString).pathExtension.lowercased()] ?? "application/octet-stream"
        if isAbsolute { return SiteLogo(url: servedPath, served: (Array(data), type)) }
        return SiteLogo(url: "/public/" + relative, served: nil)
    }
}
