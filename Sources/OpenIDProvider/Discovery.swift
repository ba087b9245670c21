import JSON

enum ResponseModes {
    static let supported = [ResponseMode.query.rawValue, ResponseMode.formPost.rawValue]
}

/// The endpoint paths, and the discovery document that lists them (OpenID Connect Discovery 1.0).
public enum ProviderEndpoints {
    public static let discovery = "/.well-known/openid-configuration"
    public static let authorization = "/oauth/authorize"
    public static let token = "/oauth/token"
    public static let userinfo = "/oauth/userinfo"
    public static let revocation = "/oauth/revoke"
    public static let jwks = "/oauth/jwks"
    /// RP-Initiated Logout 1.0.
    public static let endSession = "/oauth/logout"

    public static let claims = ["iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "at_hash", "email",
                                "email_verified", "is_private_email", "name", "apple_sub"]

    /// The issuer is the public URL (no trailing slash); every endpoint lives under it.
    public static func discoveryDocument(issuer: String) -> JSONValue {
        func strings(_ values: [String]) -> JSONValue { .array(values.map { .string($0) }) }
        return .object([
            "issuer": .string(issuer),
            "authorization_endpoint": .string(issuer + authorization),
            "token_endpoint": .string(issuer + token),
            "userinfo_endpoint": .string(issuer + userinfo),
            "revocation_endpoint": .string(issuer + revocation),
            "jwks_uri": .string(issuer + jwks),
            "end_session_endpoint": .string(issuer + endSession),
            "response_types_supported": strings(["code"]),
            "response_modes_supported": strings(ResponseModes.supported),
            "prompt_values_supported": strings(["none", "login", "consent", "select_account"]),
            "grant_types_supported": strings(["authorization_code", "refresh_token"]),
            "subject_types_supported": strings(["public"]),
            "id_token_signing_alg_values_supported": strings(["RS256"]),
            "code_challenge_methods_supported": strings([PKCE.method]),
            "scopes_supported": strings(Scopes.supported),
            "claims_supported": strings(claims),
            "token_endpoint_auth_methods_supported": strings(["none", "client_secret_basic", "client_secret_post"]),
            "revocation_endpoint_auth_methods_supported": strings(["none", "client_secret_basic", "client_secret_post"]),
            "authorization_response_iss_parameter_supported": true,
            "claims_parameter_supported": false,
            "request_parameter_supported": false,
            "request_uri_parameter_supported": false,
        ])
    }
}
