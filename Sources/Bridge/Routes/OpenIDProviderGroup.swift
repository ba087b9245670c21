import HTTPServer
import JSON
import OpenIDProvider

/// The OpenID provider's routes: public JSON documents (discovery, JWKS) and the OAuth endpoints, whose errors
/// (any under `/oauth/`) are RFC 6749 §5.2 JSON with `no-store`; and the authorization endpoint, a browser page
/// (errors before the redirect URI is known are pages).
struct OpenIDProviderGroup: Sendable {
    let oauth: RouteGroup
    let pages: WebPageGroup

    init(errors: ErrorMapping<OAuthErrorPresenter>, pages: WebPageGroup) {
        oauth = RouteGroup("oauth", owning: ["/oauth/"], errors)
        self.pages = pages
    }

    /// A document every client may fetch and cache briefly (a rotated key shows up within five minutes).
    func document(_ body: @escaping @Sendable () throws -> JSONValue) -> Router.Route {
        oauth.route { _ in
            var response = Response.json(try body().serialized())
            response.headers.set("Cache-Control", "public, max-age=300")
            response.headers.set("Access-Control-Allow-Origin", "*")
            return response
        }
    }

    func page(_ handler: @escaping Router.Handler) -> Router.Route { pages.page(handler) }

    /// A page that also sees the visitor's session, if any.
    func page(visiting handler: @escaping @Sendable (Request, SignedInVisit?) throws -> Reply) -> Router.Route {
        pages.page(visiting: handler)
    }

    func endpoint(_ handler: @escaping Router.Handler) -> Router.Route { oauth.route(handler) }

    /// An endpoint whose answer may follow a write's commit.
    func endpoint(replying handler: @escaping Router.ReplyHandler) -> Router.Route { oauth.route(replying: handler) }
}

extension BridgeApp {
    /// The OpenID provider's routes; `/.well-known/openid-configuration` is the one clients are configured with.
    static func addOpenIDProviderRoutes(to router: inout Router, _ group: OpenIDProviderGroup, _ endpoints: Endpoints,
                                        issuer: String) {
        let (authorization, tokens, userinfo) = (endpoints.providerAuthorization, endpoints.providerTokens,
                                                 endpoints.providerUserinfo)
        let keys = endpoints.providerTokens.keys
        router.add("GET", ProviderEndpoints.discovery, group.document { ProviderEndpoints.discoveryDocument(issuer: issuer) })
        router.add("GET", ProviderEndpoints.jwks, group.document { keys.jwks })
        router.add("GET", ProviderEndpoints.authorization, group.page(visiting: authorization.authorize))
        router.add("POST", ProviderEndpoints.authorization, group.page(visiting: authorization.authorize))
        router.add("GET", ProviderEndpoints.endSession, group.page(visiting: endpoints.providerLogout.endSession))
        router.add("POST", ProviderEndpoints.endSession, group.page(visiting: endpoints.providerLogout.endSession))
        router.add("POST", ProviderEndpoints.token, group.endpoint(replying: tokens.token))
        router.add("GET", ProviderEndpoints.userinfo, group.endpoint(userinfo.userinfo))
        router.add("POST", ProviderEndpoints.userinfo, group.endpoint(userinfo.userinfo))
        router.add("POST", ProviderEndpoints.revocation, group.endpoint(replying: userinfo.revoke))
    }
}
