import BridgeMetrics
import BridgeSettings
import Foundation
import Logging
import Storage
import TextBytes

/// The one rule for the sessions this server hands out, whichever route asks: a sign-in (web, webview, JSON API)
/// or an OpenID client's code opens a session, an app's or a client's with the first refresh token of a new
/// family; `POST /api/auth/refresh` and the token endpoint's `refresh_token` grant rotate a presented refresh
/// token. Works inside the caller's store write, which may run more than once: the secrets are made beforehand
/// (`newSession`, `presentation`), and reuse is counted and logged only after the write returned
/// (`recordReuse`).
package struct SessionIssuer: Sendable {
    package static let browserSessionLifetime: TimeInterval = 7 * 86_400
    package static let appSessionLifetime: TimeInterval = 30 * 86_400

    package let metrics: Metrics
    package let logger: Logger

    package init(metrics: Metrics, logger: Logger) {
        self.metrics = metrics
        self.logger = logger
    }

    // MARK: - Opening

    /// A session's secrets, made before the write: shown once to the client, stored only as digests.
    package struct NewSession: Sendable {
        package let sessionID: String
        package let sessionIDHash: String
        /// An app's or a client's: its first refresh token, that token's digest, and the new family.
        package let refresh: (token: String, hash: String, familyID: String)?

        package init(sessionID: String, sessionIDHash: String,
                     refresh: (token: String, hash: String, familyID: String)?) {
            self.sessionID = sessionID
            self.sessionIDHash = sessionIDHash
            self.refresh = refresh
        }
    }

    /// What an opened session hands to its holder.
    package struct OpenedSession: Sendable {
        package var sessionIDHash: String
        package var sessionID: String
        /// Its first refresh token and that token's family, when it has one.
        package var refresh: (token: String, familyID: String)?

        package init(sessionIDHash: String, sessionID: String, refresh: (token: String, familyID: String)? = nil) {
            self.sessionIDHash = sessionIDHash
            self.sessionID = sessionID
            self.refresh = refresh
        }
    }

    package static func newSession(withRefreshToken: Bool) -> NewSession {
        let sessionID = SecretTokens.random()
        let refresh = withRefreshToken ? SecretTokens.random() : nil
        return NewSession(sessionID: sessionID, sessionIDHash: SecretTokens.digest(sessionID),
                          refresh: refresh.map { ($0, SecretTokens.digest($0), SecretTokens.random()) })
    }

    /// The session to store (a browser's for a week, one with a refresh token for 30 days, its first refresh token
    /// expiring with it), and what it hands to its holder.
    package func session(_ new: NewSession, flow: String, now: Date) -> (toOpen: SessionToOpen, opened: OpenedSession) {
        let lifetime = new.refresh == nil ? Self.browserSessionLifetime : Self.appSessionLifetime
        let toOpen = SessionToOpen(idHash: new.sessionIDHash, flow: flow, expiresAt: now.addingTimeInterval(lifetime),
                                   refreshToken: new.refresh.map { ($0.hash, $0.familyID) })
        return (toOpen, OpenedSession(sessionIDHash: new.sessionIDHash, sessionID: new.sessionID,
                                      refresh: new.refresh.map { ($0.token, $0.familyID) }))
    }

    /// Stores a session of a known member (an OpenID client's code), as a sign-in stores its own.
    package func open(_ new: NewSession, userID: Int64, flow: String, nonceVerified: Bool,
                      in transaction: any SessionTransaction, now: Date) throws -> OpenedSession {
        let (toOpen, opened) = session(new, flow: flow, now: now)
        try transaction.open(toOpen, of: .id(userID), nonceVerified: nonceVerified, now: now)
        return opened
    }

    // MARK: - Rotation

    /// Who presents a refresh token: a token stays with the holder it was issued to.
    package enum Holder: Sendable, Equatable {
        /// An app, through the JSON API: a token issued to an OpenID client is not its own.
        case app
        /// An OpenID client, through the token endpoint: only tokens of its own grants.
        case client(id: String)
    }

    /// A presented refresh token and its successor, made before the write.
    package struct Presentation: Sendable {
        package let presentedHash: String
        package let replacement: String
        package let replacementHash: String
        package let holder: Holder
        package let now: Date

        package init(presentedHash: String, replacement: String, replacementHash: String, holder: Holder, now: Date) {
            self.presentedHash = presentedHash
            self.replacement = replacement
            self.replacementHash = replacementHash
            self.holder = holder
            self.now = now
        }
    }

    package enum Rotation: Sendable {
        /// The presented token is spent; `refreshToken` replaces it in the same family. `grant` is the OpenID
        /// client's grant the family belongs to (nil for an app's).
        case rotated(user: User, sessionIDHash: String, refreshToken: String, grant: ProviderGrant?)
        /// Presented a second time: its family and session are revoked (see `recordReuse`).
        case reused
        /// Its family was revoked for another reason than reuse (the client revoked it, or a replayed code):
        /// refused, and no reuse.
        case revoked
        /// The token rotated, but its session was gone meanwhile.
        case sessionGone
        case expiredOrUnknown
    }

    package static func presentation(of presented: String, by holder: Holder, now: Date) -> Presentation {
        let replacement = SecretTokens.random()
        return Presentation(presentedHash: SecretTokens.digest(presented), replacement: replacement,
                            replacementHash: SecretTokens.digest(replacement), holder: holder, now: now)
    }

    /// Rotates the presented token inside `transaction`. A token issued to another holder throws
    /// `anotherHolders`, so that the write, and with it the rotation, is undone.
    package func rotate(_ presentation: Presentation, in transaction: any SessionTransaction & OpenIDProviderTransaction,
                        refusingAnotherHoldersWith anotherHolders: any Error) throws -> Rotation {
        let now = presentation.now
        switch try transaction.rotateRefreshToken(tokenHash: presentation.presentedHash, now: now) {
        case let .rotated(old):
            let grant = try transaction.providerGrant(familyID: old.familyID)
            switch presentation.holder {
            case .app where grant != nil: throw anotherHolders
            case let .client(id) where grant?.clientID.hasSameUTF8(as: id) != true: throw anotherHolders
            default: break
            }
            guard let (session, user) = try transaction.session(idHash: old.sessionIDHash, now: now) else { return .sessionGone }
            try transaction.insertRefreshToken(RefreshToken(
                tokenHash: presentation.replacementHash, familyID: old.familyID, sessionIDHash: session.idHash,
                userID: user.id, createdAt: now, expiresAt: session.expiresAt))
            return .rotated(user: user, sessionIDHash: session.idHash, refreshToken: presentation.replacement, grant: grant)
        case .revoked:
            return .revoked
        case let .reused(old):
            // A second presentation is indistinguishable from a stolen copy, however soon it comes: end the
            // family, so whoever refreshed first (the thief, perhaps) loses it too. Clients refresh one at a time.
            try transaction.revokeRefreshFamily(old.familyID)
            return .reused
        case .expired, .unknown:
            return .expiredOrUnknown
        }
    }

    /// Counts and logs a reused token; called once the write that revoked its family returned.
    package func recordReuse(flow: String? = nil) {
        metrics.increment("bridge_refresh_reuse_total")
        if let flow {
            logger.warning("refresh_token_reused", ["flow": flow])
        } else {
            logger.warning("refresh_token_reused")
        }
    }
}
