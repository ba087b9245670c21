import Foundation

/// Which redirect URIs a client may register (RFC 8252 §7) and how a presented one is matched against them.
public enum RedirectURI {
    /// Nil when `uri` may be registered; otherwise why not, in a few words.
    public static func problem(_ uri: String) -> String? {
        guard uri.count <= 2000, !uri.contains(where: { $0.isWhitespace || $0 == "#" }) else {
            return "has spaces, a fragment or is too long"
        }
        guard let url = URLComponents(string: uri), let scheme = url.scheme?.lowercased(), !scheme.isEmpty else {
            return "is not an absolute URI"
        }
        switch scheme {
        case "https":
            return (url.host ?? "").isEmpty ? "has no host" : nil
        case "http":
            return isLoopback(url) ? nil : "uses http on a host other than 127.0.0.1, [::1] or localhost"
        default:
            // Private-use schemes must be reverse domain names (RFC 8252 §7.1); this also keeps out
            // javascript:, data:, file: and the like.
            guard scheme.contains("."), scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
            else { return "uses scheme \"\(scheme)\", which is neither https, loopback http, nor a reverse-domain app scheme" }
            return nil
        }
    }

    /// True when `presented` is `registered` exactly, or both are loopback http URIs differing only in the port
    /// (a native app listens on whatever port the system gives it, RFC 8252 §7.3).
    public static func matches(_ presented: String, registered: String) -> Bool {
        if presented == registered { return true }
        guard let registeredURL = URLComponents(string: registered), registeredURL.scheme == "http", isLoopback(registeredURL),
              let presentedURL = URLComponents(string: presented), presentedURL.scheme == "http",
              presentedURL.fragment == nil, presentedURL.user == nil, presentedURL.password == nil
        else { return false }
        return presentedURL.host == registeredURL.host && presentedURL.percentEncodedPath == registeredURL.percentEncodedPath
            && presentedURL.percentEncodedQuery == registeredURL.percentEncodedQuery
    }

    static func isLoopback(_ url: URLComponents) -> Bool {
        ["127.0.0.1", "[::1]", "::1", "localhost"].contains(url.host ?? "")
    }

    /// `uri` with the given parameters added to its query.
    public static func appending(_ parameters: [(String, String)], to uri: String) -> String {
        let encoded = parameters.map { "\(percentEncode($0.0))=\(percentEncode($0.1))" }.joined(separator: "&")
        return uri + (uri.contains("?") ? "&" : "?") + encoded
    }

    static func percentEncode(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }
}
