/// Anything that turns a request into a response. Throwing an `HTTPError` answers with its status.
public protocol HTTPResponder: Sendable {
    func respond(to request: Request) throws -> Response
}

/// A responder made from a closure.
public struct ClosureResponder: HTTPResponder {
    let body: @Sendable (Request) throws -> Response
    public init(_ body: @escaping @Sendable (Request) throws -> Response) { self.body = body }
    public func respond(to request: Request) throws -> Response { try body(request) }
}
