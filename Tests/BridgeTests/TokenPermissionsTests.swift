import Testing
import OpenIDProvider
@testable import Bridge

@Suite("What an access token may do")
struct TokenPermissionsTests {
    static let clients = ClientRegistry([
        OpenIDClient(clientID: "intranet", name: "Intranet", redirectURIs: ["https://intranet.example.com/cb"]),
        OpenIDClient(clientID: "own-app", name: "Our app", redirectURIs: ["com.example.app:/cb"], isFirstParty: true),
    ])

    @Test("the JSON API's own tokens and a first-party client's act for the member in full; another client's do what their scopes grant",
          arguments: [
              ("api", [], true, true, true, false),
              ("own-app", ["openid"], true, true, true, true),
              ("intranet", ["openid"], false, false, false, true),
              ("intranet", ["openid", "email"], true, false, false, true),
              ("intranet", ["openid", "email", "name"], true, true, false, true),
              ("unregistered", ["openid", "email", "name"], true, true, false, true),
          ] as [(String, [String], Bool, Bool, Bool, Bool)])
    func permissions(client: String, scopes: [String], email: Bool, name: Bool, delete: Bool, userinfo: Bool) {
        let permissions = TokenPermissions(clientID: client, scopes: scopes, clients: Self.clients)
        #expect(permissions.mayReadEmail == email)
        #expect(permissions.mayReadName == name)
        #expect(permissions.mayDeleteAccount == delete)
        #expect(permissions.mayReadUserinfo == userinfo)
    }
}
