import HTTPServer

/// Cross-origin access to the JSON API for JavaScript clients on the origins in BRIDGE_CORS_ORIGINS (an SPA, a
/// Capacitor or Ionic app, a WebView page served from app assets). Exact origins only, never credentials: the API
/// takes Bearer tokens, not cookies. Off when the list is empty.
package struct CORSPolicy: Sendable {
    package static let allowedHeaders = "Authorization, Content-Type"
    package static let exposedHeaders = "WWW-Authenticate, Retry-After"
    package static let maxAgeSeconds = 600

    package let origins: Set<String>

    package init(origins: Set<String>) {
        self.origins = origins
    }

    package var isEnabled: Bool { !origins.isEmpty }

    /// The request's `Origin` when it is on the list.
    package func allowedOrigin(of request: Request) -> String? {
        guard let origin = request.headers["Origin"], origins.contains(origin) else { return nil }
        return origin
    }

    /// Headers for an actual response: the origin (if listed) and the headers a script may read.
    package func decorate(_ response: inout Response, for request: Request) {
        guard isEnabled else { return }
        response.headers.add("Vary", "Origin")
        guard let origin = allowedOrigin(of: request) else { return }
        response.headers.set("Access-Control-Allow-Origin", origin)
        response.headers.set("Access-Control-Expose-Headers", Self.exposedHeaders)
    }

    /// The answer to `OPTIONS`: a preflight from a listed origin gets 204 and what it may send; anything else is
    /// refused as the method it is (405), as without CORS.
    package func preflight(_ request: Request, methods: [String]) throws -> Response {
        guard let origin = allowedOrigin(of: request), request.headers["Access-Control-Request-Method"] != nil else {
            let allowed = Set(methods + (methods.contains("GET") ? ["HEAD"] : [])).sorted().joined(separator: ", ")
            throw HTTPError(405, "This address does not accept that method.", headers: HTTPHeaders([("Allow", allowed)]))
        }
        var response = Response(status: 204)
        response.headers.set("Access-Control-Allow-Origin", origin)
        response.headers.set("Access-Control-Allow-Methods", methods.joined(separator: ", "))
        response.headers.set("Access-Control-Allow-Headers", Self.allowedHeaders)
        response.headers.set("Access-Control-Max-Age", String(Self.maxAgeSeconds))
        return response
    }
}
