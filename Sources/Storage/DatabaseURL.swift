import Foundation

/// A `BRIDGE_DATABASE` value, parsed once: `sqlite:PATH`, or a PostgreSQL URI
/// (`postgres://user@host:port/db?sslmode=…`, also `postgresql://`).
/// Its `description` never contains a password.
public enum DatabaseURL: Sendable, Equatable, CustomStringConvertible {
    case sqlite(path: String)
    case postgres(PostgresURL)

    /// Throws `StoreError.unsupportedURL` (naming the redacted value) for anything else.
    public init(_ value: String) throws(StoreError) {
        if value.hasPrefix("sqlite:") {
            let path = String(value.dropFirst("sqlite:".count))
            guard !path.isEmpty else {
                throw StoreError.unsupportedURL(url: value, reason: "needs a file path after sqlite: (e.g. sqlite:data/bridge.sqlite3)")
            }
            self = .sqlite(path: path)
        } else if value.hasPrefix("postgres://") || value.hasPrefix("postgresql://") {
            self = .postgres(try PostgresURL(value))
        } else {
            throw StoreError.unsupportedURL(url: Self.redactingPassword(value), reason: "expected sqlite:PATH or postgres://…")
        }
    }

    public var description: String {
        switch self {
        case let .sqlite(path): "sqlite:\(path)"
        case let .postgres(url): url.description
        }
    }

    /// Hides passwords so a database setting can go into an error message or a log line:
    /// `scheme://user:secret@host/db` → `scheme://user:***@host/db`, and any
    /// `password=secret` (libpq key/value strings, URL query) → `password=***`.
    static func redactingPassword(_ url: String) -> String {
        redactingUserInfoPassword(url)
            .replacing(/(?i)(password=)[^&\s]*/) { "\($0.output.1)***" }
    }

    /// Every password written in `url` (user info and `password=` parameters), raw and
    /// percent-decoded, for scrubbing messages that might quote them.
    static func passwords(in url: String) -> [String] {
        var found: [String] = []
        if let schemeEnd = url.range(of: "://") {
            let authority = url[schemeEnd.upperBound...].prefix { !"/?#".contains($0) }
            if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
                found.append(String(authority[authority.index(after: colon)..<at]))
            }
        }
        found += url.matches(of: /(?i)password=([^&\s]*)/).map { String($0.output.1) }
        found += found.compactMap { $0.removingPercentEncoding }
        return found.filter { !$0.isEmpty }
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

/// A PostgreSQL connection URI, checked by libpq's own parser and handed to it as is:
/// libpq applies `sslmode` and the other parameters, and fills what the URI leaves out
/// from the PG* environment variables and the password file (`~/.pgpass`, `PGPASSFILE`).
public struct PostgresURL: Sendable, Equatable, CustomStringConvertible {
    /// May contain a password: only ever given to libpq.
    let connectionString: String
    /// The URI with any password replaced by `***`.
    public let description: String
    /// What libpq read from the URI (not the environment), e.g. `dbname`, `host`, `sslmode`.
    let parameters: [String: String]

    public init(_ uri: String) throws(StoreError) {
        let shown = DatabaseURL.redactingPassword(uri)
        switch PostgresConnection.parseConnectionInfo(uri) {
        case let .failure(failure):
            let secrets = DatabaseURL.passwords(in: uri)
            let reason = secrets.reduce(failure.message) { $0.replacingOccurrences(of: $1, with: "***") }
            throw StoreError.unsupportedURL(url: shown, reason: reason)
        case let .success(parameters):
            connectionString = uri
            description = shown
            self.parameters = parameters
        }
    }

    /// The database the URI names, if it names one (libpq otherwise uses PGDATABASE or the user name).
    public var database: String? { parameters["dbname"] }

    /// The same server and settings, another database (its name percent-encoded into the path).
    public func withDatabase(_ name: String) throws(StoreError) -> PostgresURL {
        let schemeEnd = connectionString.range(of: "://")!.upperBound
        let rest = connectionString[schemeEnd...]
        let pathStart = rest.firstIndex(where: { "/?".contains($0) }) ?? rest.endIndex
        let queryStart = rest[pathStart...].firstIndex(of: "?") ?? rest.endIndex
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let encoded = name.addingPercentEncoding(withAllowedCharacters: allowed) ?? name
        return try PostgresURL(String(connectionString[..<pathStart]) + "/" + encoded + String(rest[queryStart...]))
    }

    /// Removes the password from a message that might repeat it (libpq's own errors do not, but be sure).
    func scrub(_ message: String) -> String {
        Self.scrub(message, password: parameters["password"])
    }

    private static func scrub(_ message: String, password: String?) -> String {
        guard let password, !password.isEmpty else { return message }
        return message.replacingOccurrences(of: password, with: "***")
    }
}
