import Foundation
import JSON
import OpenIDProvider
import Testing
import TestSupport

/// Every endpoint that takes an access token, with every kind of token: the JSON API's own, a relying party's by
/// its scopes, and a first-party client's.
@Suite("Access tokens do only what their client and scope allow", .serialized)
struct TokenScopeTests {
    /// An access token from the token endpoint for `client`, signed in with `scope`.
    static func providerToken(_ party: RelyingParty, client: String = RelyingParty.publicClient,
                              redirectURI: String = RelyingParty.appRedirect, scope: String) throws -> String {
        let start = try party.signIn(party.authorizePath(client: client, redirectURI: redirectURI, scope: scope))
        guard let code = RelyingParty.parameters(start)["code"] else { throw TestFailure("no code") }
        let tokens = try party.redeem(code, client: client, redirectURI: redirectURI)
        guard tokens.status == 200, let access = tokens.body["access_token"]?.stringValue else {
            throw TestFailure("token endpoint answered \(tokens.status)")
        }
        return access
    }

    static func apiToken(_ party: RelyingParty) throws -> String {
        let token = try party.harness.token(audience: BridgeHarness.bundleID, subject: "001234.api.member", nonce: nil, code: nil)
        let signIn = try party.harness.api("/api/auth/apple", json: party.harness.json(["idToken": .string(token)]))
        guard let access = signIn.body["accessToken"]?.stringValue else { throw TestFailure("sign-in answered \(signIn.status)") }
        return access
    }

    @Test("a relying party's openid token: /api/me without email or name, no account deletion, userinfo yes")
    func openidOnly() throws {
        let party = try RelyingParty()
        let access = try Self.providerToken(party, scope: "openid")
        let me = try party.harness.api("/api/me", method: "GET", bearer: access)
        #expect(me.status == 200 && me.body["memberId"] != nil && me.body["sub"] != nil)
        #expect(me.body["email"] == nil && me.body["displayName"] == nil && me.body["emailVerified"] == nil)
        let deletion = try party.harness.api("/api/me", method: "DELETE", bearer: access)
        #expect(deletion.status == 403 && deletion.body["error"] == "insufficient_scope")
        #expect(deletion.raw.header("WWW-Authenticate") == "Bearer error=\"insufficient_scope\"")
        #expect(try party.harness.app.store.read { try $0.countUsers() } == 1)
        #expect(try party.harness.api(ProviderEndpoints.userinfo, method: "GET", bearer: access).status == 200)
    }

    @Test("a relying party's token with email and name scopes reads them in /api/me, and still cannot delete")
    func emailAndName() throws {
        let party = try RelyingParty()
        let access = try Self.providerToken(party, scope: "openid email name")
        let me = try party.harness.api("/api/me", method: "GET", bearer: access)
        #expect(me.body["email"]?.stringValue == "ada@example.com" && me.body["displayName"] != nil)
        #expect(me.body["emailVerified"] != nil && me.body["isPrivateEmail"] != nil)
        #expect(try party.harness.api("/api/me", method: "DELETE", bearer: access).status == 403)
    }

    @Test("a first-party client's token reads everything and deletes the account")
    func firstParty() throws {
        let party = try RelyingParty()
        let access = try Self.providerToken(party, client: RelyingParty.firstPartyClient,
                                            redirectURI: RelyingParty.firstPartyRedirect, scope: "openid")
        let me = try party.harness.api("/api/me", method: "GET", bearer: access)
        #expect(me.body["email"]?.stringValue == "ada@example.com")
        let deletion = try party.harness.api("/api/me", method: "DELETE", bearer: access)
        #expect(deletion.status == 200 && deletion.body["deleted"] == .bool(true))
        #expect(try party.harness.app.store.read { try $0.countUsers() } == 0)
    }

    @Test("the JSON API's own token reads everything in /api/me, but is refused at /oauth/userinfo")
    func apiToken() throws {
        let party = try RelyingParty()
        let access = try Self.apiToken(party)
        let me = try party.harness.api("/api/me", method: "GET", bearer: access)
        #expect(me.status == 200 && me.body["email"] != nil && me.body["displayName"] != nil)
        let userinfo = try party.harness.api(ProviderEndpoints.userinfo, method: "GET", bearer: access)
        #expect(userinfo.status == 403 && userinfo.body["error"] == "insufficient_scope")
        #expect(userinfo.raw.header("WWW-Authenticate")?.hasPrefix("Bearer error=\"insufficient_scope\"") == true)
        #expect(userinfo.raw.header("Cache-Control") == "no-store")
    }

    @Test("userinfo without a token says so without an error code in WWW-Authenticate (RFC 6750 §3.1)")
    func userinfoWithoutToken() throws {
        let party = try RelyingParty()
        let userinfo = try party.harness.api(ProviderEndpoints.userinfo, method: "GET")
        #expect(userinfo.status == 401 && userinfo.raw.header("WWW-Authenticate") == "Bearer")
    }
}
