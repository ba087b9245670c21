import Foundation
import JSON

/// An access token for Apple's user migration endpoint (`client_credentials`, scope `user.migration`).
/// Its description leaves the token out.
public struct MigrationAccessToken: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    public let value: String
    public let expiresAt: Date

    public init(value: String, expiresAt: Date) {
        self.value = value
        self.expiresAt = expiresAt
    }

    public var description: String { "MigrationAccessToken(expiresAt: \(expiresAt))" }
    public var debugDescription: String { description }
}

/// What the recipient team learns for a transfer identifier: the person's `sub` in its own team, and the email
/// Apple shares with it (a private relay address of the new team, for people who hid theirs).
public struct MigratedUser: Sendable, Equatable {
    public var subject: String
    public var email: String?
    public var isPrivateEmail: Bool

    public init(subject: String, email: String?, isPrivateEmail: Bool) {
        self.subject = subject
        self.email = email
        self.isPrivateEmail = isPrivateEmail
    }
}

/// Apple's user migration for an app that moves to another developer team: the old team asks for each person's
/// `transfer_sub` (for the recipient team), the new team exchanges each `transfer_sub` for the person's new `sub`.
/// Both through `POST /auth/usermigrationinfo` with an access token of the asking team, retried like the other calls.
extension AppleTokenClient {
    public static let userMigrationPath = "/auth/usermigrationinfo"
    public static let userMigrationScope = "user.migration"

    /// A `client_credentials` access token of the team whose client secret this client signs.
    public func migrationAccessToken(clientID: String, now: Date = Date()) throws(AppleTokenError) -> MigrationAccessToken {
        var fields = try authentication(clientID)
        fields += [("grant_type", "client_credentials"), ("scope", Self.userMigrationScope)]
        let response = try post(Self.tokenPath, fields, deadline: nil)
        guard response.status == 200 else { throw Self.migrationFailure(response) }
        let body = try Self.jsonObject(response, "the token response")
        guard let accessToken = body["access_token"]?.stringValue, !accessToken.isEmpty else {
            throw .invalidResponse("the token response has no access_token")
        }
        let lifetime = body["expires_in"]?.int64Value.map { TimeInterval($0) } ?? 3600
        return MigrationAccessToken(value: accessToken, expiresAt: now.addingTimeInterval(lifetime))
    }

    /// Before the transfer, as the sending team: the person's transfer identifier for `targetTeam`.
    public func transferSubject(forSubject subject: String, targetTeam: String, clientID: String,
                                accessToken: MigrationAccessToken) throws(AppleTokenError) -> String {
        var fields = [("sub", subject), ("target", targetTeam)]
        fields += try authentication(clientID)
        let body = try migrationInfo(fields, accessToken)
        guard let transferSubject = body["transfer_sub"]?.stringValue, !transferSubject.isEmpty else {
            throw .invalidResponse("the user migration answer has no transfer_sub")
        }
        return transferSubject
    }

    /// After the transfer, as the recipient team: the person behind `transferSubject`, in this team.
    public func migratedUser(forTransferSubject transferSubject: String, clientID: String,
                             accessToken: MigrationAccessToken) throws(AppleTokenError) -> MigratedUser {
        var fields = [("transfer_sub", transferSubject)]
        fields += try authentication(clientID)
        let body = try migrationInfo(fields, accessToken)
        // Apple answers 200 without a `sub` for a transfer identifier it cannot map to a person of this team.
        guard let subject = body["sub"]?.stringValue, !subject.isEmpty else {
            throw .apple(code: "no_sub", advice: Self.migrationAdvice("no_sub"))
        }
        let email = body["email"]?.stringValue
        return MigratedUser(subject: subject, email: email?.isEmpty == false ? email : nil,
                            isPrivateEmail: AppleClaims.flag(body["is_private_email"]) ?? false)
    }

    private func migrationInfo(_ fields: [(String, String)],
                               _ accessToken: MigrationAccessToken) throws(AppleTokenError) -> JSONValue {
        let response = try post(Self.userMigrationPath, fields, deadline: nil, bearerToken: accessToken.value)
        guard response.status == 200 else { throw Self.migrationFailure(response) }
        return try Self.jsonObject(response, "the user migration answer")
    }

    private static func jsonObject(_ response: HTTPExchange, _ what: String) throws(AppleTokenError) -> JSONValue {
        guard let body = try? JSONValue.parse(response.body), case .object = body else {
            throw .invalidResponse("\(what) is not a JSON object")
        }
        return body
    }

    /// Apple's error with advice for the migration endpoints; a 401 without a body is an access token Apple no
    /// longer accepts.
    private static func migrationFailure(_ response: HTTPExchange) -> AppleTokenError {
        if (400..<500).contains(response.status), let code = (try? JSONValue.parse(response.body))?["error"]?.stringValue {
            let code = loggable(code)
            return .apple(code: code, advice: migrationAdvice(code))
        }
        if response.status == 401 { return .apple(code: "invalid_token", advice: migrationAdvice("invalid_token")) }
        return .invalidResponse("HTTP \(response.status) without an OAuth error")
    }

    public static func migrationAdvice(_ code: String) -> String {
        switch code {
        case "invalid_client":
            "Apple refused the client secret: check APPLE_TEAM_ID, APPLE_KEY_ID and the .p8 key of the team making this call, and that the client_id belongs to that team"
        case "invalid_request", "no_sub":
            "Apple does not know this person for this app and team (the account was deleted, consent was revoked, or the identifier is for another team)"
        case "invalid_grant", "invalid_token":
            "Apple refused the migration access token: it expired or belongs to another team"
        case "unauthorized_client", "invalid_scope":
            "the client may not use the user.migration scope: check that the app is being transferred (or was, less than 60 days ago) and that the key belongs to the team making the call"
        default:
            "Apple answered with an error this server does not know; see Apple's documentation for it"
        }
    }
}
