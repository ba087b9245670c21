/// The scopes this provider knows. Unknown scopes in a request are dropped, as RFC 6749 §3.3 allows.
public enum Scopes {
    public static let supported = ["openid", "email", "name", "offline_access"]

    /// The supported scopes of a space-separated request, in the supported order.
    public static func granted(_ requested: String) -> [String] {
        let asked = Set(requested.split(separator: " ").map(String.init))
        return supported.filter { asked.contains($0) }
    }
}
