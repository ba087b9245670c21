import BridgeSettings
import Foundation

/// The content security policy of every HTML page this service sends: its own scripts and styles only, and forms
/// that post to this server only. The login page alone may also load Apple's JS SDK (APPLE_JS_SDK).
///
/// Chromium also checks `form-action` against every redirect that follows a form submission. The re-post page's
/// form is answered with a redirect to where the sign-in ends, so that page's policy names those destinations too
/// (and the simulator's auto-post page, whose post the same redirect answers, gets them from `dev`); so does the
/// login page in popup mode, whose own form posts Apple's answer.
package enum ContentSecurityPolicy {
    /// - Parameter appleJSSDKSource: the origin Apple's JS SDK is loaded from, allowed as a script source.
    package static func header(appleJSSDKSource: String? = nil, formActions: [String] = []) -> String {
        let script = (["'self'"] + (appleJSSDKSource.map { [$0] } ?? [])).joined(separator: " ")
        let formAction = (["'self'"] + formActions).joined(separator: " ")
        return "default-src 'none'; script-src \(script); style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            + "form-action \(formAction); frame-ancestors 'none'; base-uri 'none'"
    }

    /// The login page's policy. With APPLE_JS_SDK its script may load the SDK from where it is served. A sign-in can
    /// be posted from this page to `/apple_redirect` (popup mode's own form; an app's webview posting its native
    /// sign-in), and Chromium checks `form-action` on the redirect that answers it too. For an OpenID client's
    /// sign-in that redirect goes to `clientRedirectURI`, always allowed; for a web sign-in, in popup mode, to where
    /// a web sign-in lands.
    package static func loginPage(_ configuration: BridgeConfiguration, clientRedirectURI: String? = nil) -> String {
        var formActions: [String] = []
        if let clientRedirectURI {
            formActions = clientRedirectSource(clientRedirectURI).map { [$0] } ?? []
        } else if configuration.useJSPopup {
            formActions = sources(of: webSignInDestinations(configuration.site.afterSignInURL, configuration.site.returnURLs))
        }
        let sdk = configuration.useJSSDK ? source(of: configuration.appleJSSDKBaseURL) : nil
        return header(appleJSSDKSource: sdk, formActions: formActions)
    }

    /// An OpenID client's form_post answer: the page's one form posts to the client's redirect URI.
    package static func formPost(to redirectURI: String) -> String {
        header(formActions: clientRedirectSource(redirectURI).map { [$0] } ?? [])
    }

    /// The re-post page's policy: this server, and where the reposted callback may send the browser on. For an
    /// OpenID client's sign-in that is the client's redirect URI, which the provider flow stored with the attempt;
    /// for a web sign-in it is the after-sign-in URL or an allowed return URL.
    package static func repostPage(providerRedirectURI: String?, afterSignInURL: String, returnURLs: ReturnURLPolicy) -> String {
        let destinations = providerRedirectURI.map { [$0] } ?? webSignInDestinations(afterSignInURL, returnURLs)
        return header(formActions: sources(of: destinations))
    }

    /// Where a web sign-in may land: BRIDGE_AFTER_SIGN_IN_URL and the entries of BRIDGE_RETURN_URLS.
    package static func webSignInDestinations(_ afterSignInURL: String, _ returnURLs: ReturnURLPolicy) -> [String] {
        [afterSignInURL] + returnURLs.exact.sorted() + returnURLs.prefixes
    }

    /// The `form-action` sources of `addresses`, each once, in order; paths on this server need none ('self').
    package static func sources(of addresses: [String]) -> [String] {
        unique(addresses.compactMap(source(of:)))
    }

    /// Each source once, in order.
    package static func unique(_ sources: [String]) -> [String] {
        var seen: Set<String> = []
        return sources.filter { seen.insert($0).inserted }
    }

    /// A host as an origin writes it: an IPv6 address in brackets.
    private static func originHost(_ host: String) -> String {
        host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
    }

    /// The source expression that admits `address`: an http(s) URL's origin, or `scheme:` for an app's own scheme
    /// (an OpenID client's `com.example.app:/callback`). Nil for a path, and for anything that cannot be written
    /// into the header as it is: the source is rebuilt from parsed parts and checked character by character.
    package static func source(of address: String) -> String? {
        guard !address.hasPrefix("/"), let components = URLComponents(string: address),
              let scheme = components.scheme?.lowercased(), let first = scheme.first, first.isLetter,
              scheme.allSatisfy(schemeCharacters.contains) else { return nil }
        guard scheme == "http" || scheme == "https" else { return scheme + ":" }
        guard let host = components.host?.lowercased(), !host.isEmpty, components.user == nil,
              components.password == nil else { return nil }
        var origin = scheme + "://" + originHost(host)
        if let port = components.port { origin += ":\(port)" }
        return origin.allSatisfy(originCharacters.contains) ? origin : nil
    }

    /// The source of a client's registered redirect URI. The registry admits plain http on loopback only, where a
    /// native app listens on whatever port it gets (RFC 8252 §7.3) and the redirect URI matches on any port, so
    /// such a source admits every port.
    package static func clientRedirectSource(_ uri: String) -> String? {
        guard let origin = source(of: uri) else { return nil }
        guard origin.hasPrefix("http://"), let host = URLComponents(string: uri)?.host?.lowercased() else { return origin }
        return "http://" + originHost(host) + ":*"
    }

    private static let schemeCharacters = Set("abcdefghijklmnopqrstuvwxyz0123456789+-.")
    private static let originCharacters = Set("abcdefghijklmnopqrstuvwxyz0123456789-._:/[]")
}

extension BridgeConfiguration {
    /// The `form-action` sources of every place besides this server that the answer to `POST /apple_redirect` may
    /// send a browser to: the OpenID clients' redirect URIs, BRIDGE_AFTER_SIGN_IN_URL and BRIDGE_RETURN_URLS.
    /// `dev` hands them to the Apple ID simulator, whose auto-post page is the form that post comes from.
    public var signInDestinationSources: [String] {
        let clientRedirects = clients.clients.keys.sorted().flatMap { clients.clients[$0]?.redirectURIs ?? [] }
            .compactMap(ContentSecurityPolicy.clientRedirectSource)
        return ContentSecurityPolicy.unique(clientRedirects + ContentSecurityPolicy.sources(
            of: ContentSecurityPolicy.webSignInDestinations(site.afterSignInURL, site.returnURLs)))
    }
}
