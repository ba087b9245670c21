import HTTPServer
import Storage

extension Request {
    /// Runs `body` in a write transaction and answers with `then(its result)` once committed, without holding a
    /// listener thread meanwhile (see `Reply.after(starting:then:)`). A failed transaction's error is the reply's
    /// failure, presented by the route's group as usual. `isolation`: see `WriteIsolation`.
    package func answer<Role, T: Sendable>(afterWriting body: @escaping @Sendable (Role) throws -> T,
                                           to store: StoreAccess<Role>,
                                           isolation: WriteIsolation = .serializable,
                                           then finish: @escaping @Sendable (T) throws -> Response) -> Reply {
        .after(starting: { store.write(isolation: isolation, body, completion: $0) }) { outcome in
            Reply(try finish(try outcome.get()))
        }
    }

    /// As `answer(afterWriting:to:isolation:then:)`, replying with what `finish` replies.
    package func reply<Role, T: Sendable>(afterWriting body: @escaping @Sendable (Role) throws -> T,
                                          to store: StoreAccess<Role>,
                                          isolation: WriteIsolation = .serializable,
                                          then finish: @escaping @Sendable (T) throws -> Reply) -> Reply {
        .after(starting: { store.write(isolation: isolation, body, completion: $0) }) { outcome in
            try finish(try outcome.get())
        }
    }
}
