import Foundation

/// The operator's brand and where a person goes after signing in: `BRIDGE_SITE_NAME`, `BRIDGE_SITE_LOGO`,
/// `BRIDGE_AFTER_SIGN_IN_URL` and `BRIDGE_RETURN_URLS`.
public struct SiteSettings: Sendable, Equatable {
    public static let keys = ["BRIDGE_SITE_NAME", "BRIDGE_SITE_LOGO", "BRIDGE_AFTER_SIGN_IN_URL", "BRIDGE_RETURN_URLS"]
    package static let logoTypes = ["svg": "image/svg+xml", "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg",
                            "webp": "image/webp", "gif": "image/gif"]

    /// Shown in titles, the header and "Sign in to …"; nil shows the product's name.
    public var siteName: String?
    /// A file under `Public/` (relative) or an absolute path; read at start-up.
    public var logoPath: String?
    /// Where a web sign-in lands when no allowed `return_to` came with it.
    public var afterSignInURL: String
    public var returnURLs: ReturnURLPolicy

    public init(siteName: String? = nil, logoPath: String? = nil, afterSignInURL: String = "/session",
                returnURLs: ReturnURLPolicy = ReturnURLPolicy()) {
        self.siteName = siteName
        self.logoPath = logoPath
        self.afterSignInURL = afterSignInURL
        self.returnURLs = returnURLs
    }

    package init(_ value: (String) -> String?) throws(ConfigurationError) {
        siteName = value("BRIDGE_SITE_NAME")
        if let name = siteName, name.count > 80 || name.contains(where: { $0.isNewline }) {
            throw ConfigurationError("BRIDGE_SITE_NAME", "must be one line of at most 80 characters")
        }
        logoPath = value("BRIDGE_SITE_LOGO")
        if let logo = logoPath, Self.logoTypes[(logo as NSString).pathExtension.lowercased()] == nil {
            throw ConfigurationError("BRIDGE_SITE_LOGO", "must name an .svg, .png, .jpg, .webp or .gif file")
        }
        afterSignInURL = value("BRIDGE_AFTER_SIGN_IN_URL") ?? "/session"
        guard ReturnURLPolicy.isWellFormed(afterSignInURL) else {
            throw ConfigurationError("BRIDGE_AFTER_SIGN_IN_URL", "must be a path on this server (/…) or an http(s) URL without user info")
        }
        do {
            returnURLs = try ReturnURLPolicy(setting: value("BRIDGE_RETURN_URLS"))
        } catch {
            throw ConfigurationError("BRIDGE_RETURN_URLS", error.problem)
        }
    }
}
