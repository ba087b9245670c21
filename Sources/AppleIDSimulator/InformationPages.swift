/// The simulator's error page and its home page.
enum InformationPages {
    static func error(_ error: AuthorizeError) -> String {
        let body = """
            <h1>This sign-in request is invalid</h1>
            <p>\(HTML.escape(error.reason))</p>
            <p class="muted"><small>Error: <code>\(HTML.escape(error.code))</code>. Apple would refuse this request too;
            fix the authorize URL the app builds.</small></p>
            """
        return HTML.document(title: "Invalid request (simulated Apple ID)", body: body)
    }

    static func home(issuer: String) -> String {
        let body = """
            <h1>Simulated Apple ID</h1>
            <p>A local stand-in for <code>https://appleid.apple.com</code>, for development and tests. It signs
            identity tokens with its own keys: never trust them outside development.</p>
            <dl><dt>Issuer</dt><dd><code>\(HTML.escape(issuer))</code></dd></dl>
            <ul class="endpoints">
            <li><code>GET /auth/authorize</code> — the sign-in page (form_post back to the app, or web_message to
            the page that opened it as a popup)</li>
            <li><code>GET /appleauth/static/jsapi/appleid/1/en_US/appleid.auth.js</code> — a stand-in for Apple's JS SDK</li>
            <li><code>GET /auth/keys</code> — the public keys (JWKS)</li>
            <li><code>POST /auth/token</code> — code and refresh token exchange</li>
            <li><code>POST /auth/revoke</code> — token revocation</li>
            <li><code>POST /__simulator/rotate-keys</code> — start signing with a new key</li>
            </ul>
            """
        return HTML.document(title: "Simulated Apple ID", body: body)
    }
}
