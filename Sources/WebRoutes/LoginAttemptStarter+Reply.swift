import HTTPServer
import SignIn

extension LoginAttemptStarter {
    /// Starts an attempt (finishing `authorization`'s client request when given), then answers with `respond` once its
    /// write committed; the listener thread serves other connections meanwhile.
    package func start(_ request: Request, admission: RateLimitAdmission, for authorization: ClientAuthorization? = nil,
                       then respond: @escaping @Sendable (Started) throws -> Response) throws -> Reply {
        let prepared = try prepare(admission: admission, for: authorization)
        return request.answer(afterWriting: prepared.write, to: store, isolation: prepared.isolation) { [self] in
            committed(prepared)
            return try respond(prepared.started)
        }
    }
}
