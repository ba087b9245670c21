import Foundation
import HTTPServer
import Storage

/// What the Apple callback needs from the OpenID provider for a sign-in a client started at the authorization
/// endpoint. `ProviderAuthorizationFlow` provides it; the composition hands it to `AppleRedirect`, so the web routes
/// do not depend on the provider's.
package protocol ClientSignIns: Sendable {
    /// A code for the client, to store inside the sign-in's transaction.
    func issueCode(for authorization: ProviderAuthorization, authTime: Date?) -> ClientCode
    /// The answer that hands the client its code, once the write that stored it committed.
    func handOver(_ issued: ClientCode, userID: Int64) -> Response
    /// Apple reported an error: the client's answer when the attempt belongs to a client's authorization, else nil.
    func appleError(_ request: Request, _ fields: FormFields, appleError: String) throws -> Reply?
}

/// A code issued to an OpenID client: `store` writes it for the signed-in member inside a store transaction
/// (`SignInRequest.alongside`), or alone for a session's code.
package struct ClientCode: Sendable {
    package let code: String
    package let authorization: ProviderAuthorization
    package let store: @Sendable (any OpenIDProviderTransaction, User) throws -> Void

    package init(code: String, authorization: ProviderAuthorization,
                 store: @escaping @Sendable (any OpenIDProviderTransaction, User) throws -> Void) {
        self.code = code
        self.authorization = authorization
        self.store = store
    }
}
