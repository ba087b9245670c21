import AppleID
import Foundation

/// The human-readable summary `verify-token` prints.
public enum TokenReport {
    public static func describe(_ identity: AppleIdentity) -> String {
        let formatter = ISO8601DateFormatter()
        var lines = [
            "valid identity token",
            "  sub:              \(identity.subject)",
            "  aud:              \(identity.audience)",
            "  iss:              \(identity.issuer)",
            "  email:            \(identity.email ?? "(not shared)")",
            "  email_verified:   \(identity.emailVerified)",
            "  is_private_email: \(identity.isPrivateEmail)",
            "  nonce verified:   \(identity.nonceVerified)",
            "  issued at:        \(formatter.string(from: identity.issuedAt))",
            "  expires at:       \(formatter.string(from: identity.expiresAt))",
        ]
        if let status = identity.realUserStatus { lines.append("  real_user_status: \(status)") }
        if let transferSubject = identity.transferSubject { lines.append("  transfer_sub:     \(transferSubject)") }
        return lines.joined(separator: "\n")
    }
}
