/// A checked authorization request, ready to start the Apple sign-in.
public struct AuthorizationRequest: Sendable, Equatable {
    public var client: OpenIDClient
    public var redirectURI: String
    public var state: String?
    public var nonce: String?
    public var codeChallenge: String?
    public var scopes: [String]
    /// How the answer reaches the redirect URI: its query (a 303), or a form the browser posts there.
    public var responseMode: ResponseMode = .query
    /// `prompt`'s values this provider acts on (`none`, `login`; `select_account` is read as `login`).
    public var prompt: Set<Prompt> = []
    /// `max_age`: a session older than this many seconds asks for a new sign-in.
    public var maxAge: Int? = nil
    /// `id_token_hint`, as sent: an ID token this provider issued, naming who the client expects.
    public var idTokenHint: String? = nil
}

/// OAuth 2.0 Multiple Response Type Encoding Practices and Form Post Response Mode.
public enum ResponseMode: String, Sendable, Equatable {
    case query
    case formPost = "form_post"

    /// The mode a request asks for, as far as it can be told: an unknown or repeated one answers in the query.
    public static func requested(_ parameter: (String) -> String?) -> ResponseMode {
        parameter("response_mode").flatMap(ResponseMode.init(rawValue:)) ?? .query
    }
}

/// OpenID Connect Core 3.1.2.1 `prompt`.
public enum Prompt: String, Sendable, Equatable, Hashable {
    /// Answer without showing anything: a code for the session, or `login_required`.
    case none
    /// Ask the person to sign in again, even with a session.
    case login
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
                                          "prompt", "request", "request_uri", "code_challenge", "code_challenge_method",
                                          "response_mode", "max_age", "id_token_hint"]
    /// Generous for an RS256 ID token with every claim this provider sets.
    static let maximumHintLength = 8192

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
        if let mode = parameter("response_mode"), ResponseMode(rawValue: mode) == nil {
            throw refuse("invalid_request", "response_mode must be query or form_post")
        }
        guard parameter("response_type") == "code" else { throw refuse("unsupported_response_type", "response_type must be code") }
        let scopes = Scopes.granted(parameter("scope") ?? "")
        guard scopes.contains("openid") else { throw refuse("invalid_scope", "scope must include openid") }
        if parameter("request") != nil { throw refuse("request_not_supported", "request objects are not supported") }
        if parameter("request_uri") != nil { throw refuse("request_uri_not_supported", "request_uri is not supported") }
        let prompt = try prompt(parameter("prompt"), refuse: refuse)
        let maxAge = try maxAge(parameter("max_age"), refuse: refuse)
        let challenge = try codeChallenge(parameter, client: client, refuse: refuse)
        let nonce = parameter("nonce")
        for (name, value) in [("state", state), ("nonce", nonce)] where (value?.utf8.count ?? 0) > maximumParameterLength {
            throw refuse("invalid_request", "\(name) is longer than \(maximumParameterLength) bytes")
        }
        let hint = parameter("id_token_hint")
        if let hint, hint.utf8.count > maximumHintLength {
            throw refuse("invalid_request", "id_token_hint is longer than \(maximumHintLength) bytes")
        }
        return AuthorizationRequest(client: client, redirectURI: redirectURI, state: state, nonce: nonce,
                                    codeChallenge: challenge, scopes: scopes, responseMode: ResponseMode.requested(parameter),
                                    prompt: prompt, maxAge: maxAge, idTokenHint: hint.flatMap { $0.isEmpty ? nil : $0 })
    }

    /// `prompt` (OpenID Connect Core 3.1.2.1): `none` alone, or any of `login`, `consent`, `select_account`. There
    /// is no consent screen to show (a registered client is trusted), and choosing another account means signing in
    /// again; values this provider does not know are ignored.
    private static func prompt(_ value: String?, refuse: (String, String) -> AuthorizationRefusal)
        throws(AuthorizationRefusal) -> Set<Prompt>
    {
        let values = Set((value ?? "").split(separator: " ").map(String.init))
        if values.contains("none") {
            guard values.count == 1 else { throw refuse("invalid_request", "prompt=none cannot be combined with other values") }
            return [.none]
        }
        return values.contains("login") || values.contains("select_account") ? [.login] : []
    }

    /// `max_age`: a whole number of seconds.
    private static func maxAge(_ value: String?, refuse: (String, String) -> AuthorizationRefusal)
        throws(AuthorizationRefusal) -> Int?
    {
        guard let value else { return nil }
        guard !value.isEmpty, value.utf8.count <= 10, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let seconds = Int(value) else {
            throw refuse("invalid_request", "max_age must be a whole number of seconds")
        }
        return seconds
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
