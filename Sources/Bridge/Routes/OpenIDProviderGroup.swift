import HTTPServer
import JSON
import OpenIDProvider

/// The OpenID provider's routes: public JSON documents (discovery, JWKS), the authorization endpoint (a browser
/// page: errors before the redirect URI is known are pages), and the OAuth endpoints (RFC 6749 §5.2 JSON errors,
/// `no-store`).
struct OpenIDProviderGroup: Sendable {
    let pageErrors: ErrorMapping<WebErrorPresenter>
    let jsonErrors: ErrorMapping<JSONErrorPresenter>

    /// A document every client may fetch and cache briefly (a rotated key shows up within five minutes).
    func document(_ body: @escaping @Sendable () throws -> JSONValue) -> Router.Handler {
        { [jsonErrors] request in
            try jsonErrors.respond(to: request) { _ in
                var response = Response.json(try body().serialized())
                response.headers.set("Cache-Control", "public, max-age=300")
                response.headers.set("Access-Control-Allow-Origin", "*")
                return response
            }
        }
    }

    func page(_ handler: @escaping Router.Handler) -> Router.Handler {
        { [pageErrors] request in try pageErrors.respond(to: request, with: handler) }
    }

    func oauth(_ handler: @escaping Router.Handler) -> Router.Handler {
        { [jsonErrors] request in
            try jsonErrors.respond(to: request) { request in
                do {
                    return try handler(request)
                } catch let refusal as OAuthRefusal {
                    return refusal.response
                }
            }
        }
    }
}

extension BridgeApp {
    /// The OpenID provider's routes; `/.well-known/openid-configuration` is the one clients are configured with.
    func addOpenIDProviderRoutes(to router: inout Router) {
        let group = OpenIDProviderGroup(pageErrors: groups.pageErrors, jsonErrors: groups.jsonErrors)
        let (authorization, tokens, userinfo) = (endpoints.providerAuthorization, endpoints.providerTokens,
                                                 endpoints.providerUserinfo)
        let (issuer, keys) = (configuration.publicURL, endpoints.providerTokens.keys)
        router.add("GET", ProviderEndpoints.discovery, group.document { ProviderEndpoints.discoveryDocument(issuer: issuer) })
        router.add("GET", ProviderEndpoints.jwks, group.document { keys.jwks })
        router.add("GET", ProviderEndpoints.authorization, group.page(authorization.authorize))
        router.add("POST", ProviderEndpoints.token, group.oauth(tokens.token))
        router.add("GET", ProviderEndpoints.userinfo, group.oauth(userinfo.userinfo))
        router.add("POST", ProviderEndpoints.userinfo, group.oauth(userinfo.userinfo))
        router.add("POST", ProviderEndpoints.revocation, group.oauth(userinfo.revoke))
    }
}
