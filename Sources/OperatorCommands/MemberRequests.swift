import AppleID
import Bridge
import BridgeSettings
import Foundation
import JSON
import Logging
import SignIn
import Storage

/// How a member request ended: what goes to standard output (JSON) and standard error, and the exit status.
public struct MemberRequestOutcome: Equatable, Sendable {
    /// Each way a request can end has its own exit status, so that a script can tell them apart.
    public enum Status: Int32, Sendable {
        case done = 0
        /// The configuration or the database could not be used.
        case failed = 1
        /// The command line was wrong; nothing was looked up.
        case usage = 2
        case notFound = 3
        /// `delete` without `--yes`: nothing was deleted.
        case notConfirmed = 4
    }

    public var status: Status
    public var output: String?
    public var message: String?

    public init(status: Status, output: String? = nil, message: String? = nil) {
        self.status = status
        self.output = output
        self.message = message
    }
}

/// Data-subject requests (access, erasure) run against the store: the logic of `apple-signin-bridge members`,
/// without the process. Every request writes one audit line, `member_request`, with the action, the member id(s) and
/// the outcome; never the email or `sub` it was asked with.
public struct MemberRequests: Sendable {
    package let store: any Store
    /// The account page's deletion.
    package let accountDeletion: AccountDeletion
    package let clock: WallClock
    package let logger: Logger

    /// Opens what a request needs from `configuration` and runs it. A database that cannot be opened is an outcome
    /// (`.failed`) with its audit line, like any other.
    public static func run(_ request: MemberRequest, configuration: BridgeConfiguration, logger: Logger,
                           transport: any AppleHTTPTransport = URLSessionTransport()) -> MemberRequestOutcome {
        do {
            return try MemberRequests.configured(configuration, transport: transport, logger: logger).run(request)
        } catch {
            MemberRequestAudit(request: request, logger: logger).record(outcome: "failed")
            return MemberRequestOutcome(status: .failed, message: error.description)
        }
    }

    public func run(_ request: MemberRequest) -> MemberRequestOutcome {
        let audit = MemberRequestAudit(request: request, logger: logger)
        do {
            switch request {
            case let .find(lookup): return try find(lookup, audit)
            case let .export(memberID): return try export(memberID, audit)
            case let .delete(memberID, confirmed): return try delete(memberID, confirmed: confirmed, audit)
            case let .groups(memberID, change): return try groups(memberID, change: change, audit)
            }
        } catch {
            audit.record(outcome: "failed")
            return MemberRequestOutcome(status: .failed, message: "the database could not be used: \(error)")
        }
    }

    /// Prints a JSON array of the members found: at most one by `sub`, possibly several by email.
    private func find(_ lookup: MemberRequest.Lookup, _ audit: MemberRequestAudit) throws -> MemberRequestOutcome {
        let members = try store.read { transaction in
            switch lookup {
            case let .sub(sub): try transaction.user(providerUserID: sub).map { [$0] } ?? []
            case let .email(email): try transaction.users(email: email)
            }
        }
        audit.record(memberIDs: members.map(\.id), outcome: members.isEmpty ? "not_found" : "found")
        guard !members.isEmpty else {
            let named = switch lookup {
            case .sub: "that sub"
            case .email: "that email"
            }
            return MemberRequestOutcome(status: .notFound, message: "no member has \(named)")
        }
        return MemberRequestOutcome(status: .done, output: JSONValue.array(members.map(MemberExport.profile)).serialized())
    }

    private func export(_ memberID: Int64, _ audit: MemberRequestAudit) throws -> MemberRequestOutcome {
        guard let records = try store.read({ try $0.memberRecords(userID: memberID) }) else {
            audit.record(outcome: "not_found")
            return Self.notFound(memberID)
        }
        audit.record(outcome: "exported")
        return MemberRequestOutcome(status: .done, output: MemberExport.document(records, exportedAt: clock.now).serialized())
    }

    /// Unconfirmed, says what would go; confirmed, deletes as the account page does: Apple's token revoked, or
    /// queued for the revocation queue when Apple does not take it now, then the member and everything of theirs.
    private func delete(_ memberID: Int64, confirmed: Bool, _ audit: MemberRequestAudit) throws -> MemberRequestOutcome {
        guard confirmed else {
            guard let records = try store.read({ try $0.memberRecords(userID: memberID) }) else {
                audit.record(outcome: "not_found")
                return Self.notFound(memberID)
            }
            audit.record(outcome: "not_confirmed")
            return MemberRequestOutcome(status: .notConfirmed, message: Self.unconfirmedDeletion(records))
        }
        guard let revocation = try accountDeletion.deleteAccount(userID: memberID) else {
            audit.record(outcome: "not_found")
            return Self.notFound(memberID)
        }
        audit.record(outcome: "deleted", appleRevocation: revocation.rawValue)
        let answer: JSONValue = ["deleted": true, "memberId": .integer(memberID), "appleRevocation": .string(revocation.rawValue)]
        return MemberRequestOutcome(status: .done, output: answer.serialized())
    }

    /// Prints `{"memberId": ID, "groups": [...]}`, after adding or removing the group when asked to.
    private func groups(_ memberID: Int64, change: MemberRequest.GroupChange?,
                        _ audit: MemberRequestAudit) throws -> MemberRequestOutcome {
        let now = clock.now
        let found: (groups: [MemberGroup], changed: Bool)? = try store.write { transaction in
            guard try transaction.user(id: memberID) != nil else { return nil }
            let changed = switch change {
            case let .add(group)?: try transaction.addGroup(userID: memberID, group: group, now: now)
            case let .remove(group)?: try transaction.removeGroup(userID: memberID, group: group)
            case nil: false
            }
            return (try transaction.groups(userID: memberID), changed)
        }
        guard let found else {
            audit.record(outcome: "not_found")
            return Self.notFound(memberID)
        }
        let outcome = switch change {
        case .add?: found.changed ? "added" : "already_member"
        case .remove?: found.changed ? "removed" : "not_member"
        case nil: "listed"
        }
        audit.record(outcome: outcome)
        let answer: JSONValue = ["memberId": .integer(memberID), "groups": .array(found.groups.map { .string($0.name) })]
        return MemberRequestOutcome(status: .done, output: answer.serialized())
    }

    private static func notFound(_ memberID: Int64) -> MemberRequestOutcome {
        MemberRequestOutcome(status: .notFound, message: "no member has id \(memberID)")
    }

    package static func unconfirmedDeletion(_ records: MemberRecords) -> String {
        func count(_ number: Int, _ noun: String) -> String { "\(number) \(noun)\(number == 1 ? "" : "s")" }
        let families = Set(records.refreshTokens.map(\.familyID)).count + Set(records.revokedRefreshTokens.map(\.token.familyID)).count
        let apple = records.appleToken == nil ? "no Apple token" : "an Apple token (revoked at Apple first)"
        return "not deleted: member \(records.user.id) has \(count(records.sessions.count, "session")), "
            + "\(count(families, "refresh-token family")), \(count(records.providerGrants.count, "OpenID provider grant")), "
            + "\(count(records.authorizationCodes.count, "authorization code")) and \(apple). "
            + "Deleting removes the member and all of it, as the account page does; run again with --yes to delete."
    }
}

/// The one audit line of a member request. Member ids, the action and the outcome only: the email or `sub` a
/// request names stays out of the log, as everywhere else in it.
package struct MemberRequestAudit {
    package let request: MemberRequest
    package let logger: Logger

    package init(request: MemberRequest, logger: Logger) {
        self.request = request
        self.logger = logger
    }

    /// `memberIDs`: those found; by default the one the request names (none for `find`).
    package func record(memberIDs: [Int64]? = nil, outcome: String, appleRevocation: String? = nil) {
        let found = memberIDs ?? request.memberID.map { [$0] } ?? []
        let ids = found.isEmpty ? "none" : found.map(String.init).joined(separator: ",")
        if let appleRevocation {
            logger.info("member_request", ["action": request.action, "member_id": ids, "outcome": outcome,
                                           "apple_revocation": appleRevocation])
        } else if case let .find(lookup) = request {
            let by = switch lookup {
            case .sub: "sub"
            case .email: "email"
            }
            logger.info("member_request", ["action": request.action, "by": by, "member_id": ids, "outcome": outcome])
        } else {
            logger.info("member_request", ["action": request.action, "member_id": ids, "outcome": outcome])
        }
    }
}
