import HTTPServer
import SignIn

extension AccountDeletion {
    /// Deletes the member and answers with `answer(what happened at Apple)` once the deletion committed; off the
    /// listener when revoking their token calls Apple.
    package func reply(deleting userID: Int64, then answer: @escaping @Sendable (RevocationResult) throws -> Response) throws -> Reply {
        let plan = try plan(userID: userID)
        let deletion = Reply.after(starting: { [self] in delete(plan, completion: $0) }, answering: { try answer(try $0.get()) })
        return plan.callsApple ? .offListener { deletion } : deletion
    }
}
