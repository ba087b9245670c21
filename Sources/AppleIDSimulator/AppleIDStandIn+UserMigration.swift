import Foundation
import HTTPServer
import JOSE
import JSON

/// What a `client_credentials` access token with scope `user.migration` lets its holder do.
struct MigrationGrant: Sendable {
    let clientID: String
    /// The team whose client secret obtained it (the secret's `iss`).
    let teamID: String
}

extension AppleIDStandIn {
    public static let userMigrationScope = "user.migration"

    // MARK: Controls for tests and development

    /// Simulates "the app moved to team `teamID`": from now on identity tokens carry each person's `sub` in that
    /// team and, as Apple's do during the 60-day migration period, the `transfer_sub` claim; and that team may
    /// exchange transfer identifiers at `/auth/usermigrationinfo`.
    public func transferApp(toTeam teamID: String) {
        state.withLock { $0.appOwnerTeam = teamID }
        logger.info("simulator_app_transferred", ["team": teamID])
    }

    /// Every `POST /auth/usermigrationinfo` that reached the simulator, refused ones included.
    public var userMigrationCallCount: Int { state.withLock { $0.userMigrationCallCount } }

    /// The `sub` identity tokens carry for `user` now.
    public func currentSubject(of user: SimulatedUser) -> String {
        user.subject(inTeam: state.withLock { $0.appOwnerTeam })
    }

    /// The `transfer_sub` identity tokens carry for `user` now: nil until the app was transferred.
    public func currentTransferSubject(of user: SimulatedUser) -> String? {
        state.withLock { $0.appOwnerTeam }.map { user.transferSubject(forTeam: $0) }
    }

    // MARK: Endpoints

    /// `grant_type=client_credentials` at `/auth/token`: an access token for the user migration endpoint.
    func issueMigrationAccessToken(_ form: FormFields, clientID: String) throws(OAuthError) -> [String: JSONValue] {
        guard form["scope"] == Self.userMigrationScope else {
            throw OAuthError(code: "invalid_scope", description: "client_credentials is granted for scope user.migration only.")
        }
        let teamID = try Self.teamID(ofClientSecret: form["client_secret"])
        let accessToken = OpaqueToken.make(.accessToken)
        state.withLock { $0.migrationGrants[accessToken] = MigrationGrant(clientID: clientID, teamID: teamID) }
        logger.info("simulator_migration_token_issued", ["client_id": clientID, "team": teamID])
        return ["access_token": .string(accessToken), "token_type": "Bearer", "expires_in": .integer(Self.accessTokenLifetime)]
    }

    /// `POST /auth/usermigrationinfo`: with `sub` and `target`, the person's transfer identifier for the target team
    /// (asked by the sending team); with `transfer_sub`, the person's `sub` and email in the asking team, once the
    /// app belongs to it.
    func userMigrationInfo(_ request: Request) -> Response {
        state.withLock { $0.userMigrationCallCount += 1 }
        do throws(OAuthError) {
            let grant = try migrationGrant(request)
            guard let form = request.formBody else { throw .invalidRequest("The body must be application/x-www-form-urlencoded.") }
            guard try authenticateClient(form) == grant.clientID else {
                throw .invalidClient("The client_id is not the one the access token was issued to.")
            }
            let body: [String: JSONValue]
            if let transferSubject = form["transfer_sub"], !transferSubject.isEmpty {
                body = try exchange(transferSubject: transferSubject, for: grant)
            } else if let subject = form["sub"], !subject.isEmpty {
                body = try transferSubject(of: subject, target: form["target"] ?? "", for: grant)
            } else {
                throw .invalidRequest("The request has neither sub nor transfer_sub.")
            }
            return Response.json(JSONValue.object(body).serialized())
        } catch {
            logger.info("simulator_user_migration_refused", ["error": error.code])
            return error.response
        }
    }

    private func migrationGrant(_ request: Request) throws(OAuthError) -> MigrationGrant {
        let authorization = request.headers["Authorization"] ?? ""
        guard authorization.hasPrefix("Bearer "),
              let grant = state.withLock({ $0.migrationGrants[String(authorization.dropFirst(7))] })
        else { throw OAuthError(code: "invalid_token", description: "A user.migration access token is required.", status: 401) }
        return grant
    }

    private func transferSubject(of subject: String, target: String, for grant: MigrationGrant) throws(OAuthError) -> [String: JSONValue] {
        guard target.count == 10, target.allSatisfy({ $0.isASCII && ($0.isUppercase || $0.isNumber) }), target != grant.teamID else {
            throw .invalidRequest("The target must be another team's 10-character Team ID.")
        }
        let owner = state.withLock { $0.appOwnerTeam }
        guard let user = users.first(where: { $0.subject(inTeam: owner == grant.teamID ? owner : nil) == subject }) else {
            throw .invalidRequest("The sub is not a user of this team.")
        }
        return ["transfer_sub": .string(user.transferSubject(forTeam: target))]
    }

    private func exchange(transferSubject: String, for grant: MigrationGrant) throws(OAuthError) -> [String: JSONValue] {
        guard state.withLock({ $0.appOwnerTeam }) == grant.teamID else {
            throw .invalidRequest("The app has not been transferred to this team.")
        }
        guard let user = users.first(where: { $0.transferSubject(forTeam: grant.teamID) == transferSubject }) else {
            throw .invalidRequest("The transfer_sub is not known for this team.")
        }
        return ["sub": .string(user.subject(inTeam: grant.teamID)), "email": .string(user.email), "is_private_email": false]
    }

    /// The team a client secret names (`iss`); the secret itself was checked by `authenticateClient`.
    static func teamID(ofClientSecret secret: String?) throws(OAuthError) -> String {
        guard let secret, let jws = try? CompactJWS(parsing: secret), let claims = try? jws.claims(),
              let teamID = claims["iss"]?.stringValue, !teamID.isEmpty
        else { throw .invalidClient("The client_secret names no team (iss).") }
        return teamID
    }
}

extension SimulatedUser {
    /// The person's `sub` as a team sees it: `sub` for the team the simulator started with (nil), another one,
    /// derived from the team, for a team the app moved to.
    public func subject(inTeam teamID: String?) -> String {
        guard let teamID else { return sub }
        return "002345." + SHA256.hexDigest("\(teamID)|\(sub)").prefix(32) + ".0314"
    }

    /// The person's transfer identifier for an app moving to `teamID`: the same for every app and export run.
    public func transferSubject(forTeam teamID: String) -> String {
        "820417." + SHA256.hexDigest("transfer|\(teamID)|\(sub)").prefix(32) + ".0314"
    }
}
