/// The events the bridge reports to the operator's endpoint (docs/webhooks.md has the table of their `data`).
public enum WebhookEventType: String, Sendable, CaseIterable {
    /// A first sign-in made the member (carries the flow); later sign-ins are `member.signed_in`.
    case memberCreated = "member.created"
    case memberSignedIn = "member.signed_in"
    /// Who asked (the member, the operator, Apple's account-delete) and what became of the Apple revocation.
    case memberDeleted = "member.deleted"
    /// `transfer import` moved the member to its `sub` under the new Apple developer team.
    case memberTransferred = "member.transferred"
    case appleConsentRevoked = "apple.consent_revoked"
    case appleEmailDisabled = "apple.email_disabled"
    case appleEmailEnabled = "apple.email_enabled"
    /// `webhooks test`: sent at once, never stored, never filtered out.
    case ping

    /// What BRIDGE_WEBHOOK_EVENTS may name.
    public static var filterable: [WebhookEventType] { allCases.filter { $0 != .ping } }
}

/// Who asked for a member's deletion (`member.deleted`'s `requestedBy`).
public enum DeletionRequester: String, Sendable {
    /// `POST /account/delete` or `DELETE /api/me`.
    case member
    /// `apple-signin-bridge members delete`.
    case `operator`
    /// Apple's `account-delete` server-to-server notification.
    case apple
}
