import HTTPServer

/// `Strict-Transport-Security` on every answer when the public URL is https, so a browser that once reached the
/// service never again sends its cookies over plain http. No `includeSubDomains`: sibling hosts are not this
/// service's to decide.
struct StrictTransportSecurity<Next: HTTPResponder>: HTTPResponder {
    static var headerValue: String { "max-age=31536000" }

    let next: Next
    let isEnabled: Bool

    init(_ next: Next, isEnabled: Bool) {
        self.next = next
        self.isEnabled = isEnabled
    }

    func respond(to request: Request) throws -> Response {
        guard isEnabled else { return try next.respond(to: request) }
        do {
            var response = try next.respond(to: request)
            response.headers.set("Strict-Transport-Security", Self.headerValue)
            return response
        } catch var error as HTTPError {
            error.headers.set("Strict-Transport-Security", Self.headerValue)
            throw error
        }
    }
}
