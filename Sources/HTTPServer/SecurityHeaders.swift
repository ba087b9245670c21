/// Adds browser security headers to HTML responses, `X-Content-Type-Options: nosniff` to every other one with a
/// body (so that no browser reads a JSON or text answer as a page or a script), and `Cache-Control: no-store` to anything
/// that carries a session (a session cookie or bearer token in the request, or a cookie being set).
public struct SecurityHeaders<Next: HTTPResponder>: HTTPResponder {
    public let next: Next
    public let contentSecurityPolicy: String
    public let sessionCookieNames: Set<String>

    public static var defaultContentSecurityPolicy: String {
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    }

    public init(_ next: Next, contentSecurityPolicy: String = Self.defaultContentSecurityPolicy,
                sessionCookieNames: Set<String> = []) {
        self.next = next
        self.contentSecurityPolicy = contentSecurityPolicy
        self.sessionCookieNames = sessionCookieNames
    }

    public func respond(to request: Request) -> Reply {
        // What the answer needs, and not `self`, whose copy would retain the whole responder chain.
        let (policy, sessionCookieNames) = (contentSecurityPolicy, sessionCookieNames)
        return next.respond(to: request).then { outcome in
            switch outcome {
            case var .success(response):
                Self.apply(to: &response.headers, isHTML: response.isHTML, hasBody: !response.body.isEmpty, request: request,
                           setsCookie: response.headers.contains("Set-Cookie"), policy: policy, sessionCookieNames: sessionCookieNames)
                return Reply(response)
            case var .failure(error as HTTPError):
                Self.apply(to: &error.headers, isHTML: true, hasBody: true, request: request, setsCookie: false,
                           policy: policy, sessionCookieNames: sessionCookieNames)
                return .failure(error)
            case let .failure(error):
                return .failure(error)
            }
        }
    }

    /// The headers every HTML page gets.
    private static func addBrowserHeaders(to headers: inout HTTPHeaders, contentSecurityPolicy: String) {
        if !headers.contains("Content-Security-Policy") { headers.set("Content-Security-Policy", contentSecurityPolicy) }
        headers.set("X-Content-Type-Options", "nosniff")
        headers.set("Referrer-Policy", "no-referrer")
        headers.set("X-Frame-Options", "DENY")
    }

    /// What an answer gets for what it holds: a page the browser headers, anything else with a body `nosniff`.
    /// (A redirect or a 304 has nothing a browser could sniff, and a sign-in's 303 is sent often.) Also for answers
    /// made outside a responder chain, such as the listener's refusals.
    public static func addContentHeaders(to headers: inout HTTPHeaders, isHTML: Bool, hasBody: Bool,
                                         contentSecurityPolicy: String) {
        if isHTML {
            addBrowserHeaders(to: &headers, contentSecurityPolicy: contentSecurityPolicy)
        } else if hasBody && !headers.contains("X-Content-Type-Options") {
            headers.add("X-Content-Type-Options", "nosniff")
        }
    }

    private static func apply(to headers: inout HTTPHeaders, isHTML: Bool, hasBody: Bool, request: Request, setsCookie: Bool,
                              policy: String, sessionCookieNames: Set<String>) {
        addContentHeaders(to: &headers, isHTML: isHTML, hasBody: hasBody, contentSecurityPolicy: policy)
        // One cookie looked up per session cookie name: building the request's whole cookie dictionary for
        // every response showed in profiles.
        let carriesSession = setsCookie || request.bearerToken != nil
            || sessionCookieNames.contains { request.cookie($0) != nil }
        if carriesSession { headers.set("Cache-Control", "no-store") }
    }
}
