import Foundation
import JSON
import Localization
import Storage

/// A member's records as the one JSON document `members export` prints for an access request: what the service
/// keeps about them, in words a person can follow, and none of the secrets. Sessions, refresh-token families and
/// grants are numbered within the document (`session: 1`) instead of being shown by the digests or random ids they
/// are stored under: those are handles on live credentials and mean nothing to the person.
package enum MemberExport {
    /// What a reader of the export should know of what it leaves out.
    package static let notes: [String] = [
        "Secrets are left out: session cookies, access and refresh tokens, authorization codes and Apple's tokens. The service keeps only digests or encrypted copies of them.",
        "Not kept about members: IP addresses, browser user agents, or when a browser session was last used. Apple's server-to-server notifications are kept only by their id, for 30 days, without the member they were about.",
    ]

    package static func document(_ records: MemberRecords, exportedAt: Date) -> JSONValue {
        let sessionNumbers = numbers(records.sessions.map(\.idHash))
        let families = RefreshFamily.all(in: records)
        let familyNumbers = numbers(families.map(\.id))
        return [
            "exportedAt": date(exportedAt),
            "member": profile(records.user),
            "sessions": .array(records.sessions.enumerated().map { index, session in
                [
                    "session": .integer(index + 1), "signInFlow": .string(session.flow),
                    "nonceVerified": .bool(session.nonceVerified),
                    "createdAt": date(session.createdAt), "expiresAt": date(session.expiresAt),
                ]
            }),
            "refreshTokenFamilies": .array(families.enumerated().map { index, family in
                family.json(number: index + 1, session: sessionNumbers[family.sessionIDHash],
                            grant: records.providerGrants.first { $0.familyID == family.id })
            }),
            "appleToken": records.appleToken.map { token in
                ["clientId": .string(token.clientID), "storedAt": date(token.updatedAt),
                 "revokedAtAppleWhenDeleted": true]
            } ?? .null,
            "openIDProvider": [
                "grants": .array(records.providerGrants.map { grant in
                    [
                        "clientId": .string(grant.clientID), "scope": .string(grant.scope),
                        "authenticatedAt": date(grant.authTime), "grantedAt": date(grant.createdAt),
                        "refreshTokenFamily": familyNumbers[grant.familyID].map(JSONValue.integer) ?? .null,
                    ]
                }),
                "authorizationCodes": .array(records.authorizationCodes.map { code in
                    [
                        "clientId": .string(code.clientID), "redirectUri": .string(code.redirectURI),
                        "scope": .string(code.scope), "issuedAt": date(code.createdAt), "expiresAt": date(code.expiresAt),
                        "redeemedAt": code.redeemedAt.map(date) ?? .null,
                        "refreshTokenFamily": code.familyID.flatMap { familyNumbers[$0] }.map(JSONValue.integer) ?? .null,
                    ]
                }),
            ],
            // Apple's identifiers of the person in another developer team's app (docs/app-transfer.md).
            "appleTeamTransfer": records.transfer.map { transfer in
                [
                    "transferSub": .string(transfer.transferSub), "targetTeam": .string(transfer.targetTeam),
                    "exportedAt": date(transfer.exportedAt), "importedAt": transfer.importedAt.map(date) ?? .null,
                    "newSub": transfer.newSub.map(JSONValue.string) ?? .null,
                    "importFailure": transfer.importFailure.map(JSONValue.string) ?? .null,
                ]
            } ?? .null,
            // What forward auth's `?group=` checks (docs/forward-auth.md).
            "groups": .array(records.groups.map { ["group": .string($0.name), "joinedAt": date($0.joinedAt)] }),
            "notes": .array(notes.map(JSONValue.string)),
        ]
    }

    /// The member's own fields, named as `GET /api/me` names them; what `members find` prints.
    package static func profile(_ user: User) -> JSONValue {
        [
            "memberId": .integer(user.id), "provider": .string(user.provider), "sub": .string(user.providerUserID),
            "email": user.email.map(JSONValue.string) ?? .null, "emailVerified": .bool(user.emailVerified),
            "isPrivateEmail": .bool(user.isPrivateEmail), "emailForwardingEnabled": .bool(user.emailForwardingEnabled),
            "displayName": user.displayName.map(JSONValue.string) ?? .null,
            "createdAt": date(user.createdAt), "updatedAt": date(user.updatedAt),
        ]
    }

    package static func date(_ date: Date) -> JSONValue { .string(DateFormatting.iso8601(date)) }

    /// 1, 2, … by first appearance.
    private static func numbers(_ keys: [String]) -> [String: Int] {
        var numbers: [String: Int] = [:]
        for key in keys where numbers[key] == nil {
            numbers[key] = numbers.count + 1
        }
        return numbers
    }
}

/// One sign-in's chain of refresh tokens, as the export shows it: when it began, was last refreshed and ends, how many
/// tokens it issued, whose it is, and whether it was revoked. Never a token or its digest.
private struct RefreshFamily {
    let id: String
    let sessionIDHash: String
    let tokens: [RefreshToken]
    /// nil while the family is live.
    let revokedForReuse: Bool?

    static func all(in records: MemberRecords) -> [RefreshFamily] {
        let live = Dictionary(grouping: records.refreshTokens, by: \.familyID).map { id, tokens in
            RefreshFamily(id: id, sessionIDHash: tokens[0].sessionIDHash, tokens: tokens, revokedForReuse: nil)
        }
        let revoked = Dictionary(grouping: records.revokedRefreshTokens, by: \.token.familyID).map { id, kept in
            RefreshFamily(id: id, sessionIDHash: kept[0].token.sessionIDHash, tokens: kept.map(\.token),
                          revokedForReuse: kept[0].revokedForReuse)
        }
        return (live + revoked).sorted { ($0.firstIssuedAt, $0.id) < ($1.firstIssuedAt, $1.id) }
    }

    var firstIssuedAt: Date { tokens.map(\.createdAt).min() ?? .distantPast }

    func json(number: Int, session: Int?, grant: ProviderGrant?) -> JSONValue {
        [
            "family": .integer(number),
            // A revoked family's session is gone with it.
            "session": session.map(JSONValue.integer) ?? .null,
            "issuedTo": .string(grant.map { "OpenID client \($0.clientID)" } ?? "the app (JSON API)"),
            "status": .string(revokedForReuse == nil ? "active" : "revoked"),
            // True when one of its tokens was presented twice (a copy may have been stolen); false when the client
            // revoked it or its authorization code was replayed.
            "revokedForReuse": revokedForReuse.map(JSONValue.bool) ?? .null,
            "firstIssuedAt": MemberExport.date(firstIssuedAt),
            "lastRefreshedAt": tokens.compactMap(\.rotatedAt).max().map(MemberExport.date) ?? .null,
            "expiresAt": MemberExport.date(tokens.map(\.expiresAt).max() ?? firstIssuedAt),
            "tokensIssued": .integer(tokens.count),
        ]
    }
}
