import HTTPServer
import JSON
import OpenIDProvider
import WebPresentation
import WebRoutes

/// The OpenID provider's routes: public JSON documents (discovery, JWKS) and the OAuth endpoints, whose errors
/// (any under `/oauth/`) are RFC 6749 §5.2 JSON with `no-store`; and the authorization endpoint, a browser page
/// (errors before the redirect URI is known are pages).
package struct OpenIDProviderGroup: Sendable {
    package let oauth: RouteGroup
    package let pages: WebPageGroup
    package let rateLimit: SignInRateLimit

    package init(errors: ErrorMapping<OAuthErrorPresenter>, pages: WebPageGroup, rateLimit: SignInRateLimit) {
        oauth = RouteGroup("oauth", owning: ["/oauth/"], errors)
        self.pages = pages
        self.rateLimit = rateLimit
    }

    /// A document every client may fetch and cache briefly (a rotated key shows up within five minutes).
    package func document(_ body: @escaping @Sendable () throws -> JSONValue) -> Router.Route {
        oauth.route { _ in
            var response = Response.json(try body().serialized())
            response.headers.set("Cache-Control", "public, max-age=300")
            response.headers.set("Access-Control-Allow-Origin", "*")
            return response
        }
    }

    package func page(_ handler: @escaping Router.Handler) -> Router.Route { pages.page(handler) }

    /// A page that also sees the visitor's session, if any.
    package func page(visiting handler: @escaping @Sendable (Request, SignedInVisit?) throws -> Reply) -> Router.Route {
        pages.page(visiting: handler)
    }

    package func endpoint(_ handler: @escaping Router.Handler) -> Router.Route { oauth.route(handler) }

    /// An endpoint whose answer may follow a write's commit; with `rateLimited`, at most so many calls per client
    /// address.
    package func endpoint(rateLimited: Bool = false, replying handler: @escaping Router.ReplyHandler) -> Router.Route {
        oauth.route(replying: rateLimited ? rateLimit.limiting(handler) : handler)
    }
}

extension OpenIDProviderGroup {
    /// The OpenID provider's routes; `/.well-known/openid-configuration` is the one clients are configured with.
    package func register(on router: inout Router, issuer: String, authorization: ProviderAuthorizationFlow,
                          logout: ProviderLogout, tokens: ProviderTokenEndpoint, userinfo: ProviderUserinfo) {
        let keys = tokens.keys
        router.add("GET", ProviderEndpoints.discovery, document { ProviderEndpoints.discoveryDocument(issuer: issuer) })
        router.add("GET", ProviderEndpoints.jwks, document { keys.jwks })
        router.add("GET", ProviderEndpoints.authorization, page(visiting: authorization.authorize))
        router.add("POST", ProviderEndpoints.authorization, page(visiting: authorization.authorize))
        router.add("GET", ProviderEndpoints.endSession, page(visiting: logout.endSession))
        router.add("POST", ProviderEndpoints.endSession, page(visiting: logout.endSession))
        router.add("POST", ProviderEndpoints.token, endpoint(rateLimited: true, replying: tokens.token))
        router.add("GET", ProviderEndpoints.userinfo, endpoint(userinfo.userinfo))
        router.add("POST", ProviderEndpoints.userinfo, endpoint(userinfo.userinfo))
        router.add("POST", ProviderEndpoints.revocation, endpoint(replying: userinfo.revoke))
    }
}
