/// A checked authorization request, ready to start the Apple sign-in.
public struct AuthorizationRequest: Sendable, Equatable {
    public var client: OpenIDClient
    public var redirectURI: String
    public var state: String?
    public var nonce: String?
    public var codeChallenge: String?
    public var scopes: [String]
}

/// Why an authorization request is refused.
public enum AuthorizationRefusal: Error, Equatable {
    /// Nothing may be sent to the redirect URI: an unknown client or an unregistered redirect URI. Shown as a page.
    case unknownClient
    case missingRedirectURI
    case unregisteredRedirectURI
    /// `client_id` or `redirect_uri` given more than once: which one counts cannot be told (RFC 6749 §3.1).
    case repeatedClientOrRedirectURI
    /// The redirect URI is known: the error goes back to it (RFC 6749 §4.1.2.1).
    case redirect(error: String, description: String, redirectURI: String, state: String?)
}

extension AuthorizationRequest {
    static let maximumParameterLength = 1024
    /// The parameters this endpoint reads: RFC 6749 §3.1 forbids repeating them, and asks that any other be ignored.
    static let parameters: Set<String> = ["client_id", "redirect_uri", "response_type", "scope", "state", "nonce",
                                          "prompt", "request", "request_uri", "code_challenge", "code_challenge_method"]

    /// Checks the query of a GET to the authorization endpoint. The client and redirect URI come first, so that
    /// nothing is ever sent to a redirect URI before it is known to belong to the client. `repeated`: the names
    /// the query has more than once.
    public static func validate(_ parameter: (String) -> String?, repeated: Set<String> = [], clients: ClientRegistry)
        throws(AuthorizationRefusal) -> AuthorizationRequest
    {
        let repeated = repeated.intersection(parameters)
        guard repeated.isDisjoint(with: ["client_id", "redirect_uri"]) else { throw .repeatedClientOrRedirectURI }
        guard let clientID = parameter("client_id"), let client = clients.client(clientID) else { throw .unknownClient }
        guard let redirectURI = parameter("redirect_uri"), !redirectURI.isEmpty else { throw .missingRedirectURI }
        guard client.allowsRedirect(to: redirectURI) else { throw .unregisteredRedirectURI }
        let state = parameter("state")
        func refuse(_ error: String, _ description: String) -> AuthorizationRefusal {
            .redirect(error: error, description: description, redirectURI: redirectURI,
                      state: state.map { String($0.prefix(maximumParameterLength)) })
        }
        if let name = repeated.sorted().first {
            throw refuse("invalid_request", "the parameter \(name) is repeated")
        }
        guard parameter("response_type") == "code" else { throw refuse("unsupported_response_type", "response_type must be code") }
        let scopes = Scopes.granted(parameter("scope") ?? "")
        guard scopes.contains("openid") else { throw refuse("invalid_scope", "scope must include openid") }
        if let prompt = parameter("prompt"), prompt.split(separator: " ").contains("none") {
            throw refuse("login_required", "every sign-in goes through Apple: prompt=none cannot be honoured")
        }
        if parameter("request") != nil { throw refuse("request_not_supported", "request objects are not supported") }
        if parameter("request_uri") != nil { throw refuse("request_uri_not_supported", "request_uri is not supported") }
        let challenge = try codeChallenge(parameter, client: client, refuse: refuse)
        let nonce = parameter("nonce")
        for (name, value) in [("state", state), ("nonce", nonce)] where (value?.utf8.count ?? 0) > maximumParameterLength {
            throw refuse("invalid_request", "\(name) is longer than \(maximumParameterLength) bytes")
        }
        return AuthorizationRequest(client: client, redirectURI: redirectURI, state: state, nonce: nonce,
                                    codeChallenge: challenge, scopes: scopes)
    }

    private static func codeChallenge(_ parameter: (String) -> String?, client: OpenIDClient,
                                      refuse: (String, String) -> AuthorizationRefusal) throws(AuthorizationRefusal) -> String? {
        guard let challenge = parameter("code_challenge") else {
            if parameter("code_challenge_method") != nil { throw refuse("invalid_request", "code_challenge_method without code_challenge") }
            if !client.isConfidential { throw refuse("invalid_request", "a public client must send a PKCE code_challenge (S256)") }
            return nil
        }
        guard parameter("code_challenge_method") == PKCE.method else {
            throw refuse("invalid_request", "code_challenge_method must be S256")
        }
        guard PKCE.isWellFormedChallenge(challenge) else {
            throw refuse("invalid_request", "code_challenge must be the 43-character base64url SHA-256 of the verifier")
        }
        return challenge
    }
}
