import BridgeSettings
import HTTPServer
import SignIn
import TextBytes

/// Names and shapes of the cookies this server sets. Served over https, every name has the `__Host-` prefix: a
/// browser keeps such a cookie only when it was set over https by this very host with `Path=/` and no `Domain`, so
/// a sibling domain or a plain-http page cannot plant one. Over http (loopback development only; production
/// refuses any other http public URL) the names go without it, since not every browser accepts the prefix from
/// http://localhost; the cookies keep the same attributes. With BRIDGE_COOKIE_DOMAIN the session cookie goes to
/// that domain and its hosts (a forward-auth proxy in front of a sibling application passes it on), so it is named
/// `__Secure-` instead: `__Host-` forbids a `Domain`. Every other cookie stays on this host.
package struct CookieNames: Sendable {
    package static let unprefixedBase = "asb_"
    package static let hostPrefix = "__Host-"
    package static let securePrefix = "__Secure-"

    package static let hostPrefixedBase = hostPrefix + unprefixedBase
    package static let securePrefixedBase = securePrefix + unprefixedBase

    /// `__Host-asb_` or `asb_`.
    package let base: String
    /// The service's own session: SameSite=Lax, it is never needed on a cross-site request.
    package let session: String
    /// Binds a login attempt to the browser that started it. One per attempt, so parallel tabs work; at `Path=/`,
    /// as the prefix requires.
    package let bindingPrefix: String
    /// BRIDGE_COOKIE_DOMAIN: the session cookie's `Domain`; nil for this host only.
    package let sessionDomain: String?

    package init(publicURLIsHTTPS: Bool, sessionDomain: String? = nil) {
        base = publicURLIsHTTPS ? Self.hostPrefixedBase : Self.unprefixedBase
        session = (publicURLIsHTTPS && sessionDomain != nil ? Self.securePrefixedBase : base) + "session"
        bindingPrefix = base + "bind_"
        self.sessionDomain = sessionDomain
    }

    package func binding(forState state: String) -> String { binding(forStateDigest: SecretTokens.digest(state)) }

    /// The digest is hex: its first 16 bytes are its first 16 characters, taken without walking graphemes.
    package func binding(forStateDigest digest: String) -> String { bindingPrefix + String(decoding: digest.utf8.prefix(16), as: UTF8.self) }

    package func sessionCookie(id: String, lifetime: Int) -> Cookie {
        Cookie(name: session, value: id, path: "/", maxAge: lifetime, sameSite: .lax, domain: sessionDomain)
    }

    /// Tells the browser to forget the session cookie, in the scope it was set with.
    package var expiredSessionCookie: Cookie { .expired(session, domain: sessionDomain) }

    /// A name of this server's cookies (prefixed or not) that the request carries more than once. Browsers send
    /// every cookie that matches, so two of one name mean one was planted, and which one a parser takes is then
    /// the attacker's choice.
    /// Names are compared as bytes: `hasPrefix` and `==` would take a name whose prefix is followed by a combining
    /// mark for another spelling.
    package static func duplicated(among cookies: [(name: String, value: String)]) -> String? {
        // A request carries a handful of this server's cookies: a scan of them is cheaper than hashing each.
        var seen: [String] = []
        for (name, _) in cookies {
            guard name.hasUTF8Prefix(unprefixedBase) || name.hasUTF8Prefix(hostPrefixedBase)
                || name.hasUTF8Prefix(securePrefixedBase) else { continue }
            if seen.contains(where: { $0.hasSameUTF8(as: name) }) { return name }
            seen.append(name)
        }
        return nil
    }
}

extension BridgeConfiguration {
    package var cookieNames: CookieNames { CookieNames(publicURLIsHTTPS: isHTTPS, sessionDomain: cookieDomain) }
}
