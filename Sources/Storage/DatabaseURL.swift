enum DatabaseURL {
    /// Hides passwords so a database setting can go into an error message or a log line:
    /// `scheme://user:secret@host/db` → `scheme://user:***@host/db`, and any
    /// `password=secret` (libpq key/value strings, URL query) → `password=***`.
    static func redactingPassword(_ url: String) -> String {
        redactingUserInfoPassword(url)
            .replacing(/(?i)(password=)[^&\s]*/) { "\($0.output.1)***" }
    }

    private static func redactingUserInfoPassword(_ url: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return url }
        let authorityStart = schemeEnd.upperBound
        let authorityEnd = url[authorityStart...].firstIndex(where: { "/?#".contains($0) }) ?? url.endIndex
        let authority = url[authorityStart..<authorityEnd]
        guard let at = authority.lastIndex(of: "@"),
              let colon = authority[..<at].firstIndex(of: ":") else { return url }
        return String(url[..<url.index(after: colon)]) + "***" + String(url[at...])
    }
}
