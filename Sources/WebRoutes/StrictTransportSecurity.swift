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

    package func respond(to request: Request) -> Reply {
        guard isEnabled else { return next.respond(to: request) }
        return next.respond(to: request).then { outcome in
            switch outcome {
            case var .success(response):
                response.headers.set("Strict-Transport-Security", Self.headerValue)
                return Reply(response)
            case var .failure(error as HTTPError):
                error.headers.set("Strict-Transport-Security", Self.headerValue)
                return .failure(error)
            case let .failure(error):
                return .failure(error)
            }
        }
    }
}
