import Foundation
import HTTPServer

/// Why an authorize request is refused, in the words of Apple's error codes plus a readable reason.
struct AuthorizeError: Error, Sendable {
    let code: String
    let reason: String
}

/// The parameters of `/auth/authorize`, validated the way Apple validates them.
struct AuthorizeRequest: Sendable {
    enum ResponseMode: String, Sendable {
        case query, fragment
        case formPost = "form_post"
        /// Apple's JS SDK in popup mode: the popup hands the result to the page that opened it with postMessage.
        case webMessage = "web_message"

        /// Modes that carry the result in the body of a page rather than in a URL, as `name` and `email` need.
        var carriesResultInPage: Bool { self == .formPost || self == .webMessage }
    }

    static let parameterNames = ["client_id", "redirect_uri", "response_type", "scope", "response_mode", "state", "nonce"]
    static let supportedScopes: Set<String> = ["name", "email"]

    let clientID: String
    let redirectURI: String
    /// scheme://host[:port] of the redirect URI, for the page's `form-action` policy.
    let redirectOrigin: String
    let includesIDToken: Bool
    let scopes: Set<String>
    let responseMode: ResponseMode
    let state: String?
    let nonce: String?
    /// The parameters as received, echoed back in hidden fields of the consent form.
    let original: [(name: String, value: String)]

    init(_ fields: FormFields) throws(AuthorizeError) {
        func value(_ name: String) -> String? {
            guard let value = fields[name], !value.isEmpty else { return nil }
            return value
        }
        guard let clientID = value("client_id") else {
            throw AuthorizeError(code: "invalid_request", reason: "The request has no client_id.")
        }
        guard let redirectURI = value("redirect_uri") else {
            throw AuthorizeError(code: "invalid_request", reason: "The request has no redirect_uri.")
        }
        guard let origin = Self.origin(ofRedirectURI: redirectURI) else {
            throw AuthorizeError(code: "invalid_request",
                                 reason: "The redirect_uri must be an absolute http or https URL without a fragment.")
        }
        let responseTypes = Set((value("response_type") ?? "").split(separator: " ").map(String.init))
        guard responseTypes == ["code"] || responseTypes == ["code", "id_token"] else {
            throw AuthorizeError(code: "unsupported_response_type",
                                 reason: "The response_type must be \"code\" or \"code id_token\".")
        }
        let scopes = Set((value("scope") ?? "").split(separator: " ").map(String.init))
        guard scopes.isSubset(of: Self.supportedScopes) else {
            throw AuthorizeError(code: "invalid_scope", reason: "The scope may only contain \"name\" and \"email\".")
        }
        guard let mode = ResponseMode(rawValue: value("response_mode") ?? "query") else {
            throw AuthorizeError(code: "invalid_request",
                                 reason: "The response_mode must be \"query\", \"fragment\", \"form_post\" or \"web_message\".")
        }
        if !scopes.isEmpty && !mode.carriesResultInPage {
            throw AuthorizeError(code: "invalid_request",
                                 reason: "The response_mode must be form_post or web_message when the name or email scope is requested.")
        }
        if responseTypes.contains("id_token") && mode == .query {
            throw AuthorizeError(code: "invalid_request",
                                 reason: "An id_token cannot be returned in the query; use form_post or fragment.")
        }
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.redirectOrigin = origin
        self.includesIDToken = responseTypes.contains("id_token")
        self.scopes = scopes
        self.responseMode = mode
        self.state = value("state")
        self.nonce = value("nonce")
        self.original = Self.parameterNames.compactMap { name in value(name).map { (name, $0) } }
    }

    /// The origin of an absolute http(s) URL, or nil when the URL is not one. The origin ends up in a
    /// Content-Security-Policy header, so it is rebuilt from parsed parts and checked character by character.
    static func origin(ofRedirectURI uri: String) -> String? {
        guard let components = URLComponents(string: uri),
              let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = components.host, !host.isEmpty,
              components.fragment == nil, components.user == nil, components.password == nil
        else { return nil }
        var origin = scheme + "://" + (host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host)
        if let port = components.port { origin += ":\(port)" }
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._:/[]")
        return origin.allSatisfy(allowed.contains) ? origin : nil
    }
}
