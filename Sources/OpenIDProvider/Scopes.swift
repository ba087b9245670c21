/// The scopes this provider knows. Unknown scopes in a request are dropped, as RFC 6749 §3.3 allows.
public enum Scopes {
    /// `profile` (OpenID Connect Core 5.4) carries the name, as `name` does: most relying parties ask for
    /// `openid profile email`.
    public static let supported = ["openid", "email", "profile", "name", "offline_access"]

    /// Whether these scopes grant the member's name.
    public static func grantsName(_ scopes: some Sequence<String>) -> Bool {
        scopes.contains { $0 == "name" || $0 == "profile" }
    }

    /// The supported scopes of a space-separated request, in the supported order.
    public static func granted(_ requested: String) -> [String] {
        let asked = Set(requested.split(separator: " ").map(String.init))
        return supported.filter { asked.contains($0) }
    }
}
