import Foundation

/// The Return URLs registered for the simulated app, as in Apple's developer console: Apple sends a sign-in (a
/// form post with the identity token and code, or a redirect with the code) only to one of them, compared byte for
/// byte, and otherwise answers `invalid_request` ("Invalid web redirect url") without showing the consent page.
public struct ReturnURLs: Sendable, Equatable {
    /// nil: any http(s) URL on a loopback host.
    let registered: [String]?

    /// Exactly these URLs.
    public static func only(_ urls: [String]) -> ReturnURLs { ReturnURLs(registered: urls) }

    /// Any http(s) URL whose host is written as 127.0.0.1, [::1] or localhost, on any port: a test double on one
    /// machine, whose relying parties listen on free ports. Nothing leaves the machine.
    public static let loopback = ReturnURLs(registered: nil)

    public func allows(_ uri: String) -> Bool {
        if let registered { return registered.contains { $0.utf8.elementsEqual(uri.utf8) } }
        guard let components = URLComponents(string: uri), let scheme = components.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = components.percentEncodedHost else { return false }
        return ["127.0.0.1", "[::1]", "::1", "localhost"].contains { $0.utf8.elementsEqual(host.utf8) }
    }
}
