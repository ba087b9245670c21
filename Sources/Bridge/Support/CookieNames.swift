import HTTPServer

/// Names and shapes of the cookies this server sets. Every name has the `__Host-` prefix: a browser keeps such a
/// cookie only when it was set over https by this very host with `Path=/` and no `Domain`, so a sibling domain or
/// a plain-http page cannot plant one (browsers treat http://localhost as secure, so development works too).
enum CookieNames {
    static let prefix = "__Host-asb_"
    /// The service's own session: SameSite=Lax, it is never needed on a cross-site request.
    static let session = prefix + "session"
    /// Binds a login attempt to the browser that started it. One per attempt, so parallel tabs work; at `Path=/`,
    /// as the prefix requires.
    static let bindingPrefix = prefix + "bind_"

    static func binding(forState state: String) -> String { bindingPrefix + String(SecretTokens.digest(state).prefix(16)) }

    /// A name of this server's cookies that the request carries more than once. Browsers send every cookie that
    /// matches, so two of one name mean one was planted; which one a parser takes is then the attacker's choice.
    static func duplicated(in request: Request) -> String? {
        var seen: Set<Substring> = []
        for header in request.headers.values("Cookie") {
            for part in header.split(separator: ";") {
                let name = part.drop { $0 == " " || $0 == "\t" }.prefix { $0 != "=" }
                guard name.hasPrefix(prefix) else { continue }
                if !seen.insert(name).inserted { return String(name) }
            }
        }
        return nil
    }
}
