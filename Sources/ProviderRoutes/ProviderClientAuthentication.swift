import Foundation
import HTTPServer
import OpenIDProvider
import TextBytes
import WebPresentation

/// Who is calling the token or revocation endpoint: client_secret_basic, client_secret_post, or a public client
/// naming itself (`none`). A confidential client must prove its secret; a public one must not send any.
package struct ProviderClientAuthentication: Sendable {
    package let clients: ClientRegistry

    package init(clients: ClientRegistry) {
        self.clients = clients
    }

    package func authenticate(_ request: Request, _ form: FormFields) throws(OAuthRefusal) -> OpenIDClient {
        let (clientID, secret) = try credentials(request, form)
        guard let client = clients.client(clientID) else { throw .invalidClient("unknown client") }
        switch (client.isConfidential, secret) {
        case (true, let secret?) where client.secretMatches(secret): return client
        case (true, _): throw .invalidClient("client authentication failed")
        case (false, nil): return client
        case (false, _?): throw .invalidClient("a public client has no secret")
        }
    }

    private func credentials(_ request: Request, _ form: FormFields) throws(OAuthRefusal) -> (String, String?) {
        if let header = request.headers["Authorization"], header.lowercased().hasPrefix("basic ") {
            guard let decoded = Data(base64Encoded: String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
                  let text = String(data: decoded, encoding: .utf8), let colon = text.firstIndex(of: ":"),
                  let clientID = Self.formDecoded(text[..<colon]), let secret = Self.formDecoded(text[text.index(after: colon)...])
            else { throw .invalidClient("the Basic credentials cannot be read") }
            if let named = form["client_id"], !named.hasSameUTF8(as: clientID) { throw .invalidClient("client_id differs from the Basic credentials") }
            if form["client_secret"] != nil { throw .invalidRequest("use one client authentication method, not two") }
            return (clientID, secret)
        }
        guard let clientID = form["client_id"], !clientID.isEmpty else { throw .invalidClient("client_id is missing") }
        return (clientID, form["client_secret"])
    }

    /// RFC 6749 §2.3.1: the Basic user name and password are form-encoded first.
    package static func formDecoded(_ value: Substring) -> String? {
        value.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }
}
