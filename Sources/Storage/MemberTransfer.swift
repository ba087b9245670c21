import Foundation

/// A member's part in moving the app to another Apple developer team (docs/app-transfer.md): the transfer
/// identifier the old team's export recorded, and whether the member was moved to the new team's `sub` yet.
public struct MemberTransfer: Sendable, Equatable {
    public var userID: Int64
    /// Apple's `transfer_sub` for this member and `targetTeam`; it names the member in the new team's tokens
    /// (`transfer_sub` claim) and in the import's exchange.
    public var transferSub: String
    public var targetTeam: String
    public var exportedAt: Date
    /// When the member was moved to `newSub`, by `transfer import` or by a sign-in carrying `transfer_sub`.
    public var importedAt: Date?
    public var newSub: String?
    /// Why the last import left the member in place: Apple's error code, or `sub_taken`.
    public var importFailure: String?

    public init(userID: Int64, transferSub: String, targetTeam: String, exportedAt: Date, importedAt: Date? = nil,
                newSub: String? = nil, importFailure: String? = nil) {
        self.userID = userID
        self.transferSub = transferSub
        self.targetTeam = targetTeam
        self.exportedAt = exportedAt
        self.importedAt = importedAt
        self.newSub = newSub
        self.importFailure = importFailure
    }
}

/// How far a transfer has come, for the commands' progress lines.
public struct TransferCounts: Sendable, Equatable {
    public var members: Int
    /// Members with a recorded transfer identifier (for the team asked about).
    public var exported: Int
    /// Of those, members already moved to their new `sub`.
    public var imported: Int

    public init(members: Int, exported: Int, imported: Int) {
        self.members = members
        self.exported = exported
        self.imported = imported
    }
}

/// What `completeTransferImport` did.
public enum TransferImportOutcome: Sendable, Equatable {
    /// The member now signs in with the new `sub`; id, sessions and data unchanged.
    case moved(User)
    /// Another member already has the new `sub` (someone who signed in afresh after the transfer): nothing changed.
    case subTaken(byUserID: Int64)
    /// No transfer waits for this member under that identifier (moved meanwhile, re-exported, or deleted).
    case notPending
}
