import AppleID
import Bridge
import BridgeSettings
import Foundation
import Logging
import Storage
import Webhooks

/// `apple-signin-bridge transfer export|import`: moving the app's members to another Apple developer team
/// (docs/app-transfer.md). Export runs as the old team before the transfer and records each member's transfer
/// identifier; import runs as the new team after it and moves each member to the new team's `sub`. Both resume
/// where an earlier run stopped, pace their calls, and print progress to `output`. Returns the exit status: 0 when
/// nothing is left to retry, 1 when some members should be tried again by running the command again.
public enum TransferCommand {
    /// Bad input or a configuration that cannot work: the one line the operator sees, before anything was done.
    public struct InputError: Error, CustomStringConvertible {
        public let description: String
        package init(_ description: String) { self.description = description }
    }

    public static func export(configuration: BridgeConfiguration, targetTeam: String?, clientID: String?,
                              logger: Logger, output: @escaping (String) -> Void) throws -> Int32 {
        guard let targetTeam, !targetTeam.isEmpty else {
            throw InputError("transfer export needs --target-team TEAMID: the recipient team's 10-character Team ID")
        }
        guard BridgeConfiguration.isAppleTenCharacterID(targetTeam) else {
            throw InputError("--target-team must be the recipient's 10-character Team ID, upper-case letters and digits (got \"\(targetTeam)\")")
        }
        let session = try migrationSession(configuration, clientID: clientID)
        guard targetTeam != session.teamID else {
            throw InputError("--target-team \(targetTeam) is this team's own ID (APPLE_TEAM_ID): name the team the app moves to")
        }
        let store = try CompositionRoot.openStore(configuration, logger: logger)
        return try TransferExport(store: store, session: session, targetTeam: targetTeam, output: output).run()
    }

    public static func importMembers(configuration: BridgeConfiguration, clientID: String?, logger: Logger,
                                     output: @escaping (String) -> Void) throws -> Int32 {
        let session = try migrationSession(configuration, clientID: clientID)
        let store = try CompositionRoot.openStore(configuration, logger: logger)
        return try TransferImport(store: store, session: session, output: output,
                                  webhooks: CompositionRoot.webhookEvents(configuration)).run()
    }

    private static func migrationSession(_ configuration: BridgeConfiguration,
                                         clientID: String?) throws -> MigrationSession {
        guard let teamID = configuration.teamID, let clientKey = try CompositionRoot.clientKey(configuration) else {
            throw InputError("configuration error: APPLE_TEAM_ID, APPLE_KEY_ID and APPLE_PRIVATE_KEY_PATH are needed to call Apple's user migration endpoint")
        }
        guard let clientID = clientID ?? configuration.bundleIDs.first ?? configuration.servicesID else {
            throw InputError("name the client with --client-id (the app's bundle ID or Services ID)")
        }
        let apple = CompositionRoot.appleServices(configuration, clientKey: clientKey, transport: URLSessionTransport(),
                                                  codeExchangeAttempts: MigrationSession.attempts)
        guard let tokenClient = apple.tokenClient else {
            throw InputError("configuration error: no Apple key is configured (APPLE_TEAM_ID, APPLE_KEY_ID, APPLE_PRIVATE_KEY_PATH)")
        }
        return MigrationSession(client: tokenClient, callGuard: apple.callGuard, clientID: clientID, teamID: teamID)
    }
}

/// One team's calls to Apple's user migration endpoint: one access token, renewed before it expires or when Apple
/// refuses it; calls paced, retried by the token client on failures and 5xx, and waited out (not failed) while the
/// call guard's breaker is open.
package final class MigrationSession {
    package static let attempts = 4
    /// At most this many calls a second: Apple publishes no limit for the endpoint, and a transfer has time.
    package static let callsPerSecond = 20.0
    package static let breakerWaits = 3

    package let client: AppleTokenClient
    package let callGuard: AppleCallGuard
    package let clientID: String
    package let teamID: String
    private var accessToken: MigrationAccessToken?
    private var lastCall = Date.distantPast

    package init(client: AppleTokenClient, callGuard: AppleCallGuard, clientID: String, teamID: String) {
        self.client = client
        self.callGuard = callGuard
        self.clientID = clientID
        self.teamID = teamID
    }

    package func transferSubject(forSubject subject: String, targetTeam: String) throws(AppleTokenError) -> String {
        try withAccessToken { token throws(AppleTokenError) in
            try client.transferSubject(forSubject: subject, targetTeam: targetTeam, clientID: clientID, accessToken: token)
        }
    }

    package func migratedUser(forTransferSubject transferSubject: String) throws(AppleTokenError) -> MigratedUser {
        try withAccessToken { token throws(AppleTokenError) in
            try client.migratedUser(forTransferSubject: transferSubject, clientID: clientID, accessToken: token)
        }
    }

    /// Fetched before the first member, so a key Apple refuses stops the run before it starts.
    package func prepare() throws(AppleTokenError) { _ = try currentAccessToken() }

    private func withAccessToken<T>(_ call: (MigrationAccessToken) throws(AppleTokenError) -> T) throws(AppleTokenError) -> T {
        var renewed = false
        var breakerWaits = 0
        while true {
            do {
                return try paced { () throws(AppleTokenError) in try call(try currentAccessToken()) }
            } catch .apple(code: "invalid_token", _) where !renewed, .apple(code: "invalid_grant", _) where !renewed {
                accessToken = nil
                renewed = true
            } catch .notAttempted where breakerWaits < Self.breakerWaits {
                breakerWaits += 1
                Thread.sleep(forTimeInterval: callGuard.settings.coolDown)
            }
        }
    }

    private func currentAccessToken() throws(AppleTokenError) -> MigrationAccessToken {
        if let accessToken, accessToken.expiresAt.timeIntervalSinceNow > 60 { return accessToken }
        let fresh = try paced { () throws(AppleTokenError) in try client.migrationAccessToken(clientID: clientID) }
        accessToken = fresh
        return fresh
    }

    private func paced<T>(_ call: () throws(AppleTokenError) -> T) throws(AppleTokenError) -> T {
        let wait = lastCall.addingTimeInterval(1 / Self.callsPerSecond).timeIntervalSinceNow
        if wait > 0 { Thread.sleep(forTimeInterval: wait) }
        lastCall = Date()
        return try call()
    }
}

/// How a failed call for one member is handled.
package enum MigrationFailure {
    /// Apple does not know the person for this team: list the member, leave it in place.
    case unknownToApple(String)
    /// Worth trying again in a later run (Apple unreachable, an answer that could not be used).
    case transient(String)
    /// Every other call would fail the same way (the key, the client, the scope): stop the run.
    case fatal(String)

    package init(_ error: AppleTokenError) {
        switch error {
        case let .apple(code, _) where ["invalid_request", "no_sub"].contains(code):
            self = .unknownToApple(code)
        case .apple, .clientSecretUnavailable, .idTokenRejected, .subjectMismatch:
            self = .fatal(error.description)
        case .unreachable, .notAttempted, .invalidResponse:
            self = .transient(error.description)
        }
    }
}

/// How the two runs pace their reports and give up.
package enum TransferRun {
    /// Stops a run when Apple fails this many members in a row: the rest would only fail the same way.
    package static let consecutiveFailureLimit = 20

    /// Apple's transient failures of members in a row.
    package struct FailureStreak {

        package init() {
        }
        private(set) var length = 0
        package mutating func reset() { length = 0 }
        /// One more failed member; true when the run should stop.
        package mutating func extend() -> Bool {
            length += 1
            return length >= consecutiveFailureLimit
        }
    }
    /// A progress line every this many members.
    package static let progressInterval = 100
    /// Members read from the store at a time.
    package static let batchSize = 100
}

/// `transfer export`: a transfer identifier for every member that has none for the target team yet, asked as the
/// old team and recorded in `member_transfers`.
package struct TransferExport {
    package let store: any Store
    package let session: MigrationSession
    package let targetTeam: String
    package let output: (String) -> Void

    package init(store: any Store, session: MigrationSession, targetTeam: String, output: @escaping (String) -> Void) {
        self.store = store
        self.session = session
        self.targetTeam = targetTeam
        self.output = output
    }

    package func run() throws -> Int32 {
        let start = try store.read { try $0.transferCounts(targetTeam: targetTeam) }
        output("transfer export: \(start.members) members, \(start.exported) already have a transfer identifier for team \(targetTeam); asking Apple as \(session.clientID) (team \(session.teamID))")
        do {
            try session.prepare()
        } catch {
            output("transfer export: stopped before the first member: \(error.description)")
            return 1
        }
        var done = start.exported, unknown = 0, failed = 0, handled = 0
        var streak = TransferRun.FailureStreak()
        var stopped = false
        var cursor: Int64 = 0
        members: while true {
            let batch = try store.read {
                try $0.membersAwaitingTransferExport(targetTeam: targetTeam, afterUserID: cursor, limit: TransferRun.batchSize)
            }
            guard let last = batch.last else { break }
            cursor = last.id
            for member in batch {
                do {
                    let transferSub = try session.transferSubject(forSubject: member.providerUserID, targetTeam: targetTeam)
                    try store.write { try $0.recordTransferExport(userID: member.id, transferSub: transferSub,
                                                                  targetTeam: targetTeam, now: Date()) }
                    done += 1
                    streak.reset()
                } catch let error as AppleTokenError {
                    switch MigrationFailure(error) {
                    case .fatal(let reason):
                        output("transfer export: stopped at member \(member.id): \(reason)")
                        stopped = true
                        break members
                    case .unknownToApple(let code):
                        unknown += 1
                        output("transfer export: member \(member.id) (sub \(member.providerUserID)) has no transfer identifier: Apple does not know this sub for this team (\(code))")
                    case .transient(let reason):
                        failed += 1
                        output("transfer export: member \(member.id) failed: \(reason)")
                        if streak.extend() {
                            output("transfer export: stopped: Apple failed \(streak.length) members in a row")
                            stopped = true
                            break members
                        }
                    }
                }
                handled += 1
                if handled % TransferRun.progressInterval == 0 {
                    output("transfer export: \(done)/\(start.members) members, \(unknown + failed) failed")
                }
            }
        }
        let end = try store.read { try $0.transferCounts(targetTeam: targetTeam) }
        let finished = !stopped && failed == 0
        output("transfer export: \(finished ? "done" : "unfinished"), \(end.exported)/\(end.members) members, "
               + "\(unknown) unknown to Apple (listed above), \(failed) failed"
               + (finished ? "" : "; run it again to retry the rest"))
        return finished ? 0 : 1
    }
}

/// `transfer import`: every recorded transfer identifier not imported yet, exchanged as the new team for the person's
/// new `sub`; the member keeps its id, sessions and data. Members Apple does not know stay as they are, listed.
package struct TransferImport {
    package let store: any Store
    package let session: MigrationSession
    package let output: (String) -> Void
    /// BRIDGE_WEBHOOK_*: `member.transferred` written with each move; nil writes none.
    package var webhooks: WebhookEvents? = nil

    package init(store: any Store, session: MigrationSession, output: @escaping (String) -> Void,
                 webhooks: WebhookEvents? = nil) {
        self.store = store
        self.session = session
        self.output = output
        self.webhooks = webhooks
    }

    package func run() throws -> Int32 {
        let waiting: Int
        switch try membersWaiting() {
        case .nothingToDo(let status): return status
        case .waiting(let count): waiting = count
        }
        do {
            try session.prepare()
        } catch {
            output("transfer import: stopped before the first member: \(error.description)")
            return 1
        }
        var tally = Tally()
        var streak = TransferRun.FailureStreak()
        var cursor: Int64 = 0
        members: while true {
            let batch = try store.read { try $0.pendingTransferImports(afterUserID: cursor, limit: TransferRun.batchSize) }
            guard let last = batch.last else { break }
            cursor = last.userID
            for transfer in batch where transfer.targetTeam == session.teamID {
                tally.handled += 1
                guard try importMember(transfer, into: &tally, streak: &streak) else { break members }
                if tally.handled % TransferRun.progressInterval == 0 {
                    output("transfer import: \(tally.handled)/\(waiting) members, \(tally.moved) moved, "
                           + "\(tally.leftInPlace) left in place, \(tally.failed) failed")
                }
            }
        }
        let remaining = try store.read { try $0.transferCounts(targetTeam: session.teamID) }
        let retry = remaining.exported - remaining.imported - tally.leftInPlace
        output("transfer import: \(retry == 0 ? "done" : "unfinished"), \(tally.moved) moved, \(tally.leftInPlace) left in place (listed above), \(tally.failed) failed"
               + (retry == 0 ? "" : "; run it again to retry the rest"))
        return retry == 0 ? 0 : 1
    }

    private enum Waiting {
        case waiting(Int)
        /// Nothing to move: the command's exit status.
        case nothingToDo(Int32)
    }

    /// Says how many members wait for this team (and how many for another), or why there is nothing to do.
    private func membersWaiting() throws -> Waiting {
        let all = try store.read { try $0.transferCounts(targetTeam: nil) }
        let ours = try store.read { try $0.transferCounts(targetTeam: session.teamID) }
        let waiting = ours.exported - ours.imported
        let otherTeams = (all.exported - all.imported) - waiting
        output("transfer import: \(waiting) members to move to team \(session.teamID), \(ours.imported) moved already; asking Apple as \(session.clientID)")
        if otherTeams > 0 {
            output("transfer import: \(otherTeams) members were exported for another team than APPLE_TEAM_ID \(session.teamID); they are left for that team")
        }
        if waiting > 0 { return .waiting(waiting) }
        if ours.exported == 0 {
            output("transfer import: no transfer identifier is recorded for team \(session.teamID): run transfer export --target-team \(session.teamID) as the old team first")
            return .nothingToDo(1)
        }
        output("transfer import: done, nothing left to move")
        return .nothingToDo(0)
    }

    private struct Tally {
        var moved = 0, leftInPlace = 0, failed = 0, handled = 0
    }

    /// Moves one member to its new `sub`; false when the run must stop (Apple refuses the team, or failed too many
    /// members in a row).
    private func importMember(_ transfer: MemberTransfer, into tally: inout Tally,
                              streak: inout TransferRun.FailureStreak) throws -> Bool {
        do {
            let migrated = try session.migratedUser(forTransferSubject: transfer.transferSub)
            let profile = AppleUserProfile(sub: migrated.subject, email: migrated.email, emailVerified: migrated.email != nil,
                                           isPrivateEmail: migrated.isPrivateEmail, displayName: nil)
            let now = Date()
            let outcome = try store.write { [webhooks, teamID = session.teamID] transaction in
                let outcome = try transaction.completeTransferImport(userID: transfer.userID, transferSub: transfer.transferSub,
                                                                     migrated: profile, now: now)
                if case .moved = outcome {
                    try webhooks?.record(.memberTransferred, memberID: transfer.userID, ["teamId": .string(teamID)],
                                         in: transaction, now: now)
                }
                return outcome
            }
            streak.reset()
            switch outcome {
            case .moved, .notPending: tally.moved += 1
            case .subTaken(let holder):
                tally.leftInPlace += 1
                output("transfer import: member \(transfer.userID) left in place: its new sub \(migrated.subject) already belongs to member \(holder)")
            }
        } catch let error as AppleTokenError {
            switch MigrationFailure(error) {
            case .fatal(let reason):
                output("transfer import: stopped at member \(transfer.userID): \(reason)")
                return false
            case .unknownToApple(let code):
                try store.write { try $0.recordTransferImportFailure(userID: transfer.userID, failure: code) }
                tally.leftInPlace += 1
                output("transfer import: member \(transfer.userID) left in place: Apple does not know its transfer_sub \(transfer.transferSub) (\(code))")
            case .transient(let reason):
                tally.failed += 1
                output("transfer import: member \(transfer.userID) failed: \(reason)")
                if streak.extend() {
                    output("transfer import: stopped: Apple failed \(streak.length) members in a row")
                    return false
                }
            }
        }
        return true
    }
}
