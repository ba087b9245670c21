import HTTPServer

extension AppleIDStandIn {
    /// `GET /auth/keys`: the published public keys, cacheable like Apple's.
    func serveKeys() -> Response {
        let (jwks, maxAge) = state.withLock { ($0.keys.jwks, $0.jwksCacheMaxAge) }
        var response = Response.json(jwks.serialized())
        response.headers.set("Cache-Control", "max-age=\(maxAge)")
        return response
    }
}
