/// How a statement names a member: by id once it is known, or by the Apple `sub` of the member a sign-in in the
/// same transaction is finding or creating (a lookup on the unique key, inside the statement).
public enum MemberReference: Sendable, Equatable {
    case id(Int64)
    case appleSubject(String)
}

/// The member a sign-in found or created, as the transaction goes on. On PostgreSQL the statement that finds or
/// inserts the row is sent without waiting, so a sign-in's statements and its commit cost one round trip less;
/// its row is known once the store has read that statement's result, at the commit at the latest. Asked for
/// sooner (`get()` inside the write), the store waits for it then.
///
/// Read it inside the write that made it (on its thread), or after that write returned: it is filled in before
/// the commit, and a write's caller is answered after it.
final class PendingMember: @unchecked Sendable {
    private let appleSubject: String
    private var found: (user: User, created: Bool)?
    private let settle: () throws -> Void

    init(appleSubject: String, settle: @escaping () throws -> Void) {
        self.appleSubject = appleSubject
        self.settle = settle
    }

    init(_ user: User, created: Bool) {
        appleSubject = user.providerUserID
        settle = {}
        found = (user, created)
    }

    func resolve(_ user: User, created: Bool) {
        found = (user, created)
    }

    /// The member's row as the sign-in left it, and whether the sign-in created it.
    func get() throws -> (user: User, created: Bool) {
        if let found { return found }
        try settle()
        guard let found else {
            throw StoreError.database("a sign-in's member was read outside its transaction")
        }
        return found
    }

    /// By id once the row is known, so that a statement needs no lookup; else by Apple `sub`.
    var reference: MemberReference {
        if let found { return .id(found.user.id) }
        return .appleSubject(appleSubject)
    }
}
