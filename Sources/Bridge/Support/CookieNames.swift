/// Names and shapes of the cookies this server sets.
enum CookieNames {
    /// The service's own session: SameSite=Lax, it is never needed on a cross-site request.
    static let session = "asb_session"
    /// Binds a login attempt to the browser that started it. One per attempt, so parallel tabs work.
    static let bindingPrefix = "asb_bind_"
    static let bindingPath = "/apple_redirect"

    static func binding(forState state: String) -> String { bindingPrefix + String(SecretTokens.digest(state).prefix(16)) }
}
