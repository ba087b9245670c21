import SignIn
import Testing
import OpenIDProvider
@testable import Bridge

@Suite("What an access token may do")
struct TokenPermissionsTests {
    static let clients = ClientRegistry([
        OpenIDClient(clientID: "intranet", name: "Intranet", redirectURIs: ["https://intranet.example.com/cb"]),
        OpenIDClient(clientID: "own-app", name: "Our app", redirectURIs: ["https://app.example.com/cb"], isFirstParty: true),
    ])

    @Test("the JSON API's own tokens and a first-party client's act for the member in full; another client's do what their scopes grant",
          arguments: [
              ("api", "api", [], true, true, true, false),
              ("openid", "own-app", ["openid"], true, true, true, true),
              ("openid", "intranet", ["openid"], false, false, false, true),
              ("openid", "intranet", ["openid", "email"], true, false, false, true),
              ("openid", "intranet", ["openid", "email", "name"], true, true, false, true),
              ("openid", "unregistered", ["openid", "email", "name"], true, true, false, true),
              // First-party is the session's flow, which the server sets: a token naming client "api" from a
              // client's session is that client's, and a first-party client's id on a web session is nothing.
              ("openid", "api", ["openid"], false, false, false, true),
              ("web", "own-app", ["openid"], false, false, false, true),
          ] as [(String, String, [String], Bool, Bool, Bool, Bool)])
    func permissions(flow: String, client: String, scopes: [String], email: Bool, name: Bool, delete: Bool, userinfo: Bool) {
        let permissions = TokenPermissions(sessionFlow: flow, clientID: client, scopes: scopes, clients: Self.clients)
        #expect(permissions.mayReadEmail == email)
        #expect(permissions.mayReadName == name)
        #expect(permissions.mayDeleteAccount == delete)
        #expect(permissions.mayReadUserinfo == userinfo)
    }
}
