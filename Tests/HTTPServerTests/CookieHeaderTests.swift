import HTTPServer
import Testing

/// What a browser is told in `Set-Cookie`, attribute by attribute.
@Suite("A Set-Cookie value")
struct CookieHeaderTests {
    @Test("each attribute in its place", arguments: [
        (Cookie(name: "asb_session", value: "abc"), "asb_session=abc; Path=/; Secure; HttpOnly; SameSite=Lax"),
        (Cookie(name: "a", value: "1", path: "/account", maxAge: 3600, secure: false, httpOnly: false, sameSite: .strict),
         "a=1; Path=/account; Max-Age=3600; SameSite=Strict"),
        (Cookie(name: "__Host-asb_bind_x", value: "v", maxAge: 600, sameSite: .none),
         "__Host-asb_bind_x=v; Path=/; Max-Age=600; Secure; HttpOnly; SameSite=None"),
        (Cookie(name: "b", value: "2", secure: false, sameSite: .none), "b=2; Path=/; Secure; HttpOnly; SameSite=None"),
        (Cookie.expired("asb_session"), "asb_session=; Path=/; Max-Age=0; Secure; HttpOnly; SameSite=Lax"),
        (Cookie(name: "__Secure-asb_session", value: "s", maxAge: 60, domain: "example.com"),
         "__Secure-asb_session=s; Path=/; Domain=example.com; Max-Age=60; Secure; HttpOnly; SameSite=Lax"),
        (Cookie.expired("__Secure-asb_session", domain: "example.com"),
         "__Secure-asb_session=; Path=/; Domain=example.com; Max-Age=0; Secure; HttpOnly; SameSite=Lax"),
    ])
    func header(cookie: Cookie, expected: String) {
        #expect(cookie.headerValue == expected)
    }
}
