import AppleID
import Bridge
import BridgeSettings
import Foundation
import Localization
import Logging
import Storage
import WebRoutes

/// `apple-signin-bridge invite --group G [--expires DURATION]`: a single-use link into a group. The first person who
/// signs in through it joins the group (docs/forward-auth.md). The link is printed once; only its digest is kept,
/// and the audit line names the group and the expiry, never the link.
public enum InviteCommand {
    public static let usage = "usage: apple-signin-bridge invite --group GROUP [--expires DURATION (7d, 12h, 30m; at most 365d)] [--config FILE]"

    /// A command line that cannot be run as written; nothing was stored.
    public struct InputError: Error, CustomStringConvertible {
        public let description: String
    }

    /// The link, to print on its own line.
    public static func run(configuration: BridgeConfiguration, group: String?, expires: String?,
                           logger: Logger) throws -> String {
        guard let group else { throw InputError(description: "invite needs --group GROUP; \(usage)") }
        guard StoreInput.isGroupName(group) else {
            throw InputError(description: "--group needs a group name: 1 to 64 of A-Z a-z 0-9 . _ : @ -, starting with a letter or digit")
        }
        guard let lifetime = Invitations.lifetime(expires) else {
            throw InputError(description: "--expires must be a positive whole number and a unit, s, m, h or d, of at most 365d (got \"\(expires ?? "")\")")
        }
        let store = try CompositionRoot.existingStore(configuration, logger: logger)
        let (link, expiresAt) = try Invitations.create(group: group, lifetime: lifetime, publicURL: configuration.publicURL,
                                                       store: store, now: WallClock.system.now)
        logger.info("invitation_created", ["group": group, "expires_at": DateFormatting.iso8601(expiresAt)])
        return link
    }
}
