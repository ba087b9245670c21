import HTTPServer

extension AppleIDStandIn {
    /// `POST /auth/revoke`: 200 with an empty body for known and unknown tokens alike, as Apple answers.
    func revokeToken(_ request: Request) -> Response {
        do throws(OAuthError) {
            guard let form = request.formBody else {
                throw .invalidRequest("The body must be application/x-www-form-urlencoded.")
            }
            let clientID = try authenticateClient(form)
            guard let token = form["token"], !token.isEmpty else { throw .invalidRequest("The request has no token.") }
            state.withLock { $0.grants.revoke(token, clientID: clientID) }
            logger.info("simulator_token_revoked", ["client_id": clientID])
            return Response(status: 200)
        } catch {
            logger.info("simulator_revoke_refused", ["error": error.code])
            return error.response
        }
    }
}
