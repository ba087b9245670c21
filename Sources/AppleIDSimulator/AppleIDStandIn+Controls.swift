import Foundation
import HTTPServer
import JSON

/// Controls for developers and tests on a running simulator (`apple-signin-bridge simulator`, `dev`), below
/// `/__simulator/`, which Apple does not have.
extension AppleIDStandIn {
    /// Apple's notification types `notify --event` names.
    static let notificationTypes: Set<String> = ["consent-revoked", "account-delete", "email-disabled", "email-enabled"]

    /// `POST /__simulator/notifications` (form fields `type`, `sub`, `aud`): the body Apple would post to a
    /// server-to-server notification endpoint, signed with the simulator's current key (`{"payload": JWS}`).
    func mintedNotification(_ request: Request) throws -> Response {
        let form = request.formBody ?? FormFields()
        guard let type = form["type"], Self.notificationTypes.contains(type) else {
            throw HTTPError(400, "type must be one of \(Self.notificationTypes.sorted().joined(separator: ", ")).")
        }
        guard let subject = form["sub"], !subject.isEmpty, let audience = form["aud"], !audience.isEmpty else {
            throw HTTPError(400, "sub (the person's Apple user id) and aud (the Services ID or bundle ID) are needed.")
        }
        let user = users.first { $0.sub == subject }
        let email = type == "email-disabled" || type == "email-enabled" ? user?.privateRelayEmail : nil
        let body = try mintNotification(type: type, subject: subject, audience: audience, email: email,
                                        isPrivateEmail: email.map { _ in true })
        logger.info("simulator_notification_minted", ["type": type, "sub": subject, "aud": audience])
        return Response.json(body)
    }

    /// The next authorization of every user is a first one again: Apple then posts the `user` JSON (name and email)
    /// once more, as it does after a person removed the app under Sign in with Apple in their Apple ID settings.
    public func resetFirstSignIns() {
        state.withLock { $0.grants.forgetAuthorizations() }
        logger.info("simulator_first_sign_ins_reset")
    }
}
