/// Anything that turns a request into a reply: a response now, or how it follows (see `Reply`). A failure that is
/// an `HTTPError` answers with its status.
public protocol HTTPResponder: Sendable {
    func respond(to request: Request) -> Reply
}

/// A responder made from a closure.
public struct ClosureResponder: HTTPResponder {
    let body: @Sendable (Request) throws -> Reply
    public init(replying body: @escaping @Sendable (Request) throws -> Reply) { self.body = body }
    public init(_ body: @escaping @Sendable (Request) throws -> Response) { self.body = { Reply(try body($0)) } }
    public func respond(to request: Request) -> Reply { Reply(catching: { try body(request) }) }
}
