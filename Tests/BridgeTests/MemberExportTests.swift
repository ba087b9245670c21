@testable import Bridge
import Foundation
import JSON
import OperatorCommands
import Storage
import Testing

/// The export document built from a member's records: families and grants tied together by the numbers the
/// document gives them, never by the digests and random ids they are stored under.
@Suite("Member export document")
struct MemberExportTests {
    let t0 = Date(timeIntervalSince1970: 1_750_000_000)

    @Test("families are numbered by first issue and tied to their session, client and grant; no stored digest or id appears")
    func familiesAndGrants() throws {
        let user = User(id: 5, provider: "apple", providerUserID: "001.export", email: nil, isPrivateEmail: true,
                        emailVerified: true, displayName: nil, createdAt: t0, updatedAt: t0)
        func token(_ hash: String, family: String, session: String, at offset: TimeInterval, rotated: TimeInterval? = nil) -> RefreshToken {
            RefreshToken(tokenHash: hash, familyID: family, sessionIDHash: session, userID: 5, createdAt: t0 + offset,
                         expiresAt: t0 + 86_400, rotatedAt: rotated.map { t0 + $0 })
        }
        let records = MemberRecords(
            user: user,
            sessions: [Session(idHash: "session-digest-app", userID: 5, flow: "api", nonceVerified: false, createdAt: t0,
                               expiresAt: t0 + 86_400),
                       Session(idHash: "session-digest-client", userID: 5, flow: "web", nonceVerified: true,
                               createdAt: t0 + 10, expiresAt: t0 + 86_400)],
            refreshTokens: [token("token-digest-1", family: "family-id-app", session: "session-digest-app", at: 0, rotated: 30),
                            token("token-digest-2", family: "family-id-app", session: "session-digest-app", at: 30),
                            token("token-digest-3", family: "family-id-client", session: "session-digest-client", at: 10)],
            revokedRefreshTokens: [RevokedRefreshToken(token: token("token-digest-0", family: "family-id-stolen",
                                                                    session: "session-digest-gone", at: -60),
                                                       revokedForReuse: true)],
            appleToken: nil,
            providerGrants: [ProviderGrant(familyID: "family-id-client", clientID: "rp.example", userID: 5, scope: "openid email",
                                           authTime: t0, createdAt: t0 + 10)],
            authorizationCodes: [AuthorizationCodeRecord(codeHash: "code-digest", clientID: "rp.example",
                                                          redirectURI: "https://rp.example/cb", codeChallenge: "pkce-challenge",
                                                          scope: "openid email", nonce: "client-nonce", userID: 5, authTime: t0,
                                                          createdAt: t0 + 9, expiresAt: t0 + 69, redeemedAt: t0 + 10,
                                                          familyID: "family-id-client")])
        let document = MemberExport.document(records, exportedAt: t0 + 100)
        let families = try #require(document["refreshTokenFamilies"]?.arrayValue)
        #expect(families.map { $0["family"]?.int64Value } == [1, 2, 3])
        #expect(families.map { $0["status"]?.stringValue } == ["revoked", "active", "active"])
        #expect(families.map { $0["revokedForReuse"] } == [.bool(true), .null, .null] as [JSONValue?])
        #expect(families.map { $0["session"] } == [.null, .integer(1), .integer(2)] as [JSONValue?])
        #expect(families.map { $0["issuedTo"]?.stringValue } == ["the app (JSON API)", "the app (JSON API)", "OpenID client rp.example"])
        #expect(families[1]["tokensIssued"]?.int64Value == 2)
        #expect(families[1]["lastRefreshedAt"]?.stringValue == "2025-06-15T15:07:10Z")
        #expect(families[2]["lastRefreshedAt"] == .null)
        #expect(document["openIDProvider"]?["grants"]?.arrayValue?.first?["refreshTokenFamily"]?.int64Value == 3)
        let code = try #require(document["openIDProvider"]?["authorizationCodes"]?.arrayValue?.first)
        #expect(code["refreshTokenFamily"]?.int64Value == 3)
        #expect(code["redeemedAt"]?.stringValue == "2025-06-15T15:06:50Z")
        #expect(document["member"]?["email"] == .null)
        #expect(document["appleToken"] == .null)
        let text = document.serialized()
        for stored in ["digest-", "family-id-", "pkce-challenge", "client-nonce"] {
            #expect(!text.contains(stored), "the export shows \(stored)")
        }
    }

    @Test("a member moved to another Apple team shows the transfer identifiers and dates; one never exported shows null")
    func appleTeamTransfer() throws {
        let user = User(id: 7, provider: "apple", providerUserID: "001.new-team", email: nil, isPrivateEmail: true,
                        emailVerified: true, displayName: nil, createdAt: t0, updatedAt: t0)
        func records(_ transfer: MemberTransfer?) -> MemberRecords {
            MemberRecords(user: user, sessions: [], refreshTokens: [], revokedRefreshTokens: [], appleToken: nil,
                          providerGrants: [], authorizationCodes: [], transfer: transfer)
        }
        #expect(MemberExport.document(records(nil), exportedAt: t0)["appleTeamTransfer"] == .null)
        let moved = MemberTransfer(userID: 7, transferSub: "transfer.001", targetTeam: "TEAMB12345", exportedAt: t0,
                                   importedAt: t0 + 60, newSub: "001.new-team")
        let transfer = try #require(MemberExport.document(records(moved), exportedAt: t0)["appleTeamTransfer"])
        #expect(transfer["transferSub"]?.stringValue == "transfer.001")
        #expect(transfer["targetTeam"]?.stringValue == "TEAMB12345")
        #expect(transfer["newSub"]?.stringValue == "001.new-team")
        #expect(transfer["importedAt"]?.stringValue == "2025-06-15T15:07:40Z")
        #expect(transfer["importFailure"] == .null)
    }
}
