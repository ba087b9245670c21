import HTTPServer
import Storage

extension Request {
    /// Runs `body` in a write transaction and answers with `then(its result)` once committed, without holding a
    /// listener thread meanwhile (see `answer(afterStarting:then:)`). A failed transaction's error is thrown from
    /// the resumed request, into the error mapping of the route's group as usual. `isolation`: see `WriteIsolation`.
    package func answer<T: Sendable>(afterWriting body: @escaping @Sendable (any StoreTransaction) throws -> T, to store: any Store,
                                     isolation: WriteIsolation = .serializable,
                                     then finish: @escaping @Sendable (T) throws -> Response) throws -> Response {
        try answer(afterStarting: { store.write(isolation: isolation, body, completion: $0) }) { outcome in
            try finish(try outcome.get())
        }
    }
}
