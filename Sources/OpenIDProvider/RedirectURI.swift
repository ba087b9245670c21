import Foundation
import JOSE
import TextBytes

/// Which redirect URIs a client may register (RFC 8252 §7) and how a presented one is matched against them.
public enum RedirectURI {
    /// Nil when `uri` may be registered; otherwise why not, in a few words.
    public static func problem(_ uri: String) -> String? {
        guard uri.count <= 2000, !uri.contains(where: { $0.isWhitespace || $0 == "#" }) else {
            return "has spaces, a fragment or is too long"
        }
        guard !hasControlCharacter(uri) else { return "has a control character" }
        guard isASCII(uri) else { return "has a character outside ASCII (percent-encode it)" }
        guard let url = URLComponents(string: uri), let scheme = url.scheme?.lowercased(), !scheme.isEmpty else {
            return "is not an absolute URI"
        }
        guard hasUsablePort(uri) else { return "has a port outside 1-65535" }
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

    /// True when `presented` is `registered` byte for byte, or both are loopback http URIs differing only in the
    /// port (a native app listens on whatever port the system gives it, RFC 8252 §7.3). Never by Swift's `String`
    /// equality, which is canonical equivalence: `…/\u{212A}allback` (KELVIN SIGN) would equal `…/Kallback`.
    /// A presented URI with a control character (raw or percent-encoded), a character outside ASCII or a port
    /// outside 1-65535 never matches.
    public static func matches(_ presented: String, registered: String) -> Bool {
        guard !hasControlCharacter(presented), isASCII(presented) else { return false }
        if presented.hasSameUTF8(as: registered) { return true }
        guard let registeredURL = URLComponents(string: registered), registeredURL.scheme == "http", isLoopback(registeredURL),
              let presentedURL = URLComponents(string: presented), presentedURL.scheme == "http",
              presentedURL.fragment == nil, presentedURL.user == nil, presentedURL.password == nil,
              hasUsablePort(presented)
        else { return false }
        return same(presentedURL.percentEncodedHost, registeredURL.percentEncodedHost)
            && same(presentedURL.percentEncodedPath, registeredURL.percentEncodedPath)
            && same(presentedURL.percentEncodedQuery, registeredURL.percentEncodedQuery)
    }

    private static func same(_ one: String?, _ other: String?) -> Bool {
        switch (one, other) {
        case (nil, nil): true
        case let (one?, other?): one.hasSameUTF8(as: other)
        default: false
        }
    }

    static func isASCII(_ uri: String) -> Bool { uri.utf8.allSatisfy { $0 < 0x80 } }

    /// A C0 control, DEL or a C1 control, as a character or percent-encoded (`%00`): a browser or a client's
    /// HTTP library may cut the URI there or read it otherwise than it was checked.
    static func hasControlCharacter(_ uri: String) -> Bool {
        if uri.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) { return true }
        let bytes = Array(uri.utf8)
        for index in bytes.indices where bytes[index] == UInt8(ascii: "%") && index + 2 < bytes.count {
            guard let byte = Hex.decode(String(decoding: bytes[index + 1...index + 2], as: UTF8.self))?.first else { continue }
            if byte < 0x20 || byte == 0x7F { return true }
        }
        return false
    }

    /// No port, an empty one (the scheme's default, RFC 3986 §3.2.3), or one a socket can listen on: 1-65535.
    /// Read from the URI's own text rather than Foundation's parse of it.
    static func hasUsablePort(_ uri: String) -> Bool {
        guard let schemeEnd = uri.range(of: "://") else { return true }
        let authority = uri[schemeEnd.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let hostAndPort = authority.split(separator: "@", omittingEmptySubsequences: false).last ?? authority
        let afterHost: Substring
        if hostAndPort.hasPrefix("[") {
            guard let close = hostAndPort.firstIndex(of: "]") else { return false }
            afterHost = hostAndPort[hostAndPort.index(after: close)...]
        } else {
            afterHost = hostAndPort.firstIndex(of: ":").map { hostAndPort[$0...] } ?? ""
        }
        guard afterHost.hasPrefix(":") else { return afterHost.isEmpty }
        let digits = afterHost.dropFirst()
        guard !digits.isEmpty else { return true }
        guard digits.count <= 5, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let port = Int(digits) else { return false }
        return (1...65535).contains(port)
    }

    /// The host as written, not decoded: `127.0.0.%31` is not a loopback host (a client library may resolve it
    /// otherwise, or not at all).
    static func isLoopback(_ url: URLComponents) -> Bool {
        let host = url.percentEncodedHost ?? ""
        return ["127.0.0.1", "[::1]", "::1", "localhost"].contains { $0.hasSameUTF8(as: host) }
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
