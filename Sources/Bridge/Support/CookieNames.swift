import HTTPServer

/// Names and shapes of the cookies this server sets. Served over https, every name has the `__Host-` prefix: a
/// browser keeps such a cookie only when it was set over https by this very host with `Path=/` and no `Domain`, so
/// a sibling domain or a plain-http page cannot plant one. Over http (loopback development only; production
/// refuses any other http public URL) the names go without it, since not every browser accepts the prefix from
/// http://localhost; the cookies keep the same attributes. With BRIDGE_COOKIE_DOMAIN the session cookie goes to
/// that domain and its hosts (a forward-auth proxy in front of a sibling application passes it on), so it is named
/// `__Secure-` instead: `__Host-` forbids a `Domain`. Every other cookie stays on this host.
struct CookieNames: Sendable {
    static let unprefixedBase = "asb_"
    static let hostPrefix = "__Host-"
    static let securePrefix = "__Secure-"

    static let hostPrefixedBase = hostPrefix + unprefixedBase
    static let securePrefixedBase = securePrefix + unprefixedBase

    /// `__Host-asb_` or `asb_`.
    let base: String
    /// The service's own session: SameSite=Lax, it is never needed on a cross-site request.
    let session: String
    /// Binds a login attempt to the browser that started it. One per attempt, so parallel tabs work; at `Path=/`,
    /// as the prefix requires.
    let bindingPrefix: String
    /// BRIDGE_COOKIE_DOMAIN: the session cookie's `Domain`; nil for this host only.
    let sessionDomain: String?

    init(publicURLIsHTTPS: Bool, sessionDomain: String? = nil) {
        base = publicURLIsHTTPS ? Self.hostPrefixedBase : Self.unprefixedBase
        session = (publicURLIsHTTPS && sessionDomain != nil ? Self.securePrefixedBase : base) + "session"
        bindingPrefix = base + "bind_"
        self.sessionDomain = sessionDomain
    }

    func binding(forState state: String) -> String { binding(forStateDigest: SecretTokens.digest(state)) }

    /// The digest is hex: its first 16 bytes are its first 16 characters, taken without walking graphemes.
    func binding(forStateDigest digest: String) -> String { bindingPrefix + String(decoding: digest.utf8.prefix(16), as: UTF8.self) }

    func sessionCookie(id: String, lifetime: Int) -> Cookie {
        Cookie(name: session, value: id, path: "/", maxAge: lifetime, sameSite: .lax, domain: sessionDomain)
    }

    /// Tells the browser to forget the session cookie, in the scope it was set with.
    var expiredSessionCookie: Cookie { .expired(session, domain: sessionDomain) }

    /// A name of this server's cookies (prefixed or not) that the request carries more than once. Browsers send
    /// every cookie that matches, so two of one name mean one was planted, and which one a parser takes is then
    /// the attacker's choice.
    static func duplicated(in request: Request) -> String? {
        // A request carries a handful of this server's cookies: a scan of them is cheaper than hashing each.
        var seen: [String] = []
        for (name, _) in request.sentCookies {
            guard name.hasPrefix(unprefixedBase) || name.hasPrefix(hostPrefixedBase) || name.hasPrefix(securePrefixedBase) else { continue }
            if seen.contains(name) { return name }
            seen.append(name)
        }
        return nil
    }
}
