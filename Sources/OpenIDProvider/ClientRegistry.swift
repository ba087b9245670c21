import JOSE
import JSON
import TextBytes

/// One configured relying party.
public struct OpenIDClient: Sendable, Equatable {
    public var clientID: String
    public var name: String
    public var redirectURIs: [String]
    /// SHA-256 of the client secret; nil for a public client, which must use PKCE.
    public var secretSHA256: [UInt8]?
    /// The operator's own app: its tokens may do what the JSON API's tokens do (delete the member's account).
    /// Any other client's tokens do only what their scopes grant.
    public var isFirstParty: Bool
    /// Where RP-Initiated Logout may send the browser after signing it out (`post_logout_redirect_uris`).
    public var postLogoutRedirectURIs: [String]

    public init(clientID: String, name: String, redirectURIs: [String], secretSHA256: [UInt8]? = nil,
                isFirstParty: Bool = false, postLogoutRedirectURIs: [String] = []) {
        self.postLogoutRedirectURIs = postLogoutRedirectURIs
        self.clientID = clientID
        self.name = name
        self.redirectURIs = redirectURIs
        self.secretSHA256 = secretSHA256
        self.isFirstParty = isFirstParty
    }

    public var isConfidential: Bool { secretSHA256 != nil }

    public func allowsRedirect(to uri: String) -> Bool {
        redirectURIs.contains { RedirectURI.matches(uri, registered: $0) }
    }

    /// RP-Initiated Logout 1.0 §3: the URI must be one registered, exactly (byte for byte).
    public func allowsPostLogoutRedirect(to uri: String) -> Bool {
        postLogoutRedirectURIs.contains { $0.hasSameUTF8(as: uri) }
    }

    public func secretMatches(_ secret: String) -> Bool {
        guard let secretSHA256 else { return false }
        return ConstantTime.equals(SHA256.hash(Array(secret.utf8)), secretSHA256)
    }
}

/// A client file that cannot be used: `description` is one line naming the client.
public struct ClientRegistryError: Error, Equatable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// The clients from the BRIDGE_CLIENTS_FILE JSON: a list of
/// `{"client_id", "name", "redirect_uris": [...], "client_secret_sha256"?: hex, "first_party"?: bool,
/// "post_logout_redirect_uris"?: [...]}`.
public struct ClientRegistry: Sendable {
    public let clients: [String: OpenIDClient]

    public init(_ clients: [OpenIDClient]) {
        self.clients = Dictionary(clients.map { ($0.clientID, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The client registered with exactly these bytes: the dictionary would find a canonically equal id too.
    public func client(_ clientID: String) -> OpenIDClient? {
        guard let client = clients[clientID], client.clientID.hasSameUTF8(as: clientID) else { return nil }
        return client
    }

    /// `reserved`: ids the server uses itself (the JSON API's tokens name `api`), refused in any letter case.
    public static func parse(_ bytes: [UInt8], reserving reserved: [String] = []) throws(ClientRegistryError) -> ClientRegistry {
        let document: JSONValue
        do {
            document = try JSONValue.parse(bytes)
        } catch {
            throw ClientRegistryError("is not valid JSON (\(error.reason))")
        }
        guard let entries = document.arrayValue else { throw ClientRegistryError("must be a JSON list of clients") }
        var clients: [OpenIDClient] = []
        for (index, entry) in entries.enumerated() {
            let client = try parseClient(entry, index: index)
            if reserved.contains(where: { $0.lowercased().hasSameUTF8(as: client.clientID.lowercased()) }) {
                throw ClientRegistryError("client \"\(client.clientID)\": client_id \"\(client.clientID)\" is reserved: the server uses it itself")
            }
            if clients.contains(where: { $0.clientID.hasSameUTF8(as: client.clientID) }) {
                throw ClientRegistryError("client \"\(client.clientID)\": client_id is listed twice")
            }
            clients.append(client)
        }
        return ClientRegistry(clients)
    }

    static func parseClient(_ entry: JSONValue, index: Int) throws(ClientRegistryError) -> OpenIDClient {
        guard let fields = entry.objectValue else { throw ClientRegistryError("client #\(index + 1): is not a JSON object") }
        guard let clientID = fields["client_id"]?.stringValue, isClientID(clientID) else {
            throw ClientRegistryError("client #\(index + 1): client_id must be 1-100 printable ASCII characters without spaces or ':'")
        }
        func refuse(_ reason: String) -> ClientRegistryError { ClientRegistryError("client \"\(clientID)\": \(reason)") }
        let known: Set<String> = ["client_id", "name", "redirect_uris", "client_secret_sha256", "first_party",
                                  "post_logout_redirect_uris"]
        if let unknown = fields.keys.sorted().first(where: { !known.contains($0) }) { throw refuse("unknown field \"\(unknown)\"") }
        guard let name = fields["name"]?.stringValue, !name.isEmpty, name.count <= 100 else {
            throw refuse("name must be a text of 1-100 characters")
        }
        guard let list = fields["redirect_uris"]?.arrayValue, !list.isEmpty else {
            throw refuse("redirect_uris must be a non-empty list")
        }
        let redirectURIs = try redirectURIList(list, field: "redirect_uris", label: "redirect URI", refuse: refuse)
        var postLogoutRedirectURIs: [String] = []
        if let value = fields["post_logout_redirect_uris"] {
            guard let list = value.arrayValue else { throw refuse("post_logout_redirect_uris must be a list") }
            postLogoutRedirectURIs = try redirectURIList(list, field: "post_logout_redirect_uris", label: "post-logout redirect URI",
                                                         refuse: refuse)
        }
        var secret: [UInt8]?
        if let value = fields["client_secret_sha256"] {
            guard let hex = value.stringValue, let bytes = hexBytes(hex), bytes.count == 32 else {
                throw refuse("client_secret_sha256 must be 64 hex digits (the SHA-256 of the secret)")
            }
            secret = bytes
        }
        var isFirstParty = false
        if let value = fields["first_party"] {
            guard case let .bool(flag) = value else { throw refuse("first_party must be true or false") }
            isFirstParty = flag
        }
        if isFirstParty, let problem = firstPartyProblem(redirectURIs: redirectURIs, isConfidential: secret != nil) {
            throw refuse(problem)
        }
        return OpenIDClient(clientID: clientID, name: name, redirectURIs: redirectURIs, secretSHA256: secret,
                            isFirstParty: isFirstParty, postLogoutRedirectURIs: postLogoutRedirectURIs)
    }

    private static func redirectURIList(_ list: [JSONValue], field: String, label: String,
                                        refuse: (String) -> ClientRegistryError)
        throws(ClientRegistryError) -> [String]
    {
        var uris: [String] = []
        for value in list {
            guard let uri = value.stringValue else { throw refuse("\(field) must hold texts") }
            if let problem = RedirectURI.problem(uri) { throw refuse("\(label) \"\(uri.prefix(200))\" \(problem)") }
            uris.append(uri)
        }
        return uris
    }

    /// First-party power (deleting the account) goes only to a client that can prove who receives its codes: one
    /// with a secret, or one whose every redirect URI is https (an app link the operator's domain vouches for). A
    /// public client's app scheme or loopback port can be claimed by any app on the device, which would run the
    /// flow with its own PKCE pair and get the same power.
    static func firstPartyProblem(redirectURIs: [String], isConfidential: Bool) -> String? {
        if isConfidential { return nil }
        guard let other = redirectURIs.first(where: { !$0.lowercased().utf8.starts(with: "https://".utf8) }) else { return nil }
        return "first_party needs client_secret_sha256 or https redirect URIs only; \"\(other.prefix(200))\" can be claimed by any app on the device"
    }

    static func isClientID(_ id: String) -> Bool {
        (1...100).contains(id.utf8.count) && id.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") }
    }

    static func hexBytes(_ hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for pair in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[pair...pair + 1], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
}
