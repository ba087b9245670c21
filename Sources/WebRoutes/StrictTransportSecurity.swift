import HTTPServer

/// `Strict-Transport-Security` on every answer when the public URL is https, so a browser that once reached the
/// service never again sends its cookies over plain http. No `includeSubDomains`: sibling hosts are not this
/// service's to decide.
package struct StrictTransportSecurity<Next: HTTPResponder>: HTTPResponder {
    package static var headerValue: String { "max-age=31536000" }

    package let next: Next
    package let isEnabled: Bool

    package init(_ next: Next, isEnabled: Bool) {
        self.next = next
        self.isEnabled = isEnabled
    }

    package func respond(to request: Request) throws -> Response {
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
