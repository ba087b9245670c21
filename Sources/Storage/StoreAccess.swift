/// The store as one route family or service may use it: transactions that offer `Role` and nothing else. `Role` is
/// an existential of the role protocols that caller needs, such as `any SessionTransaction & MemberGroupsTransaction`,
/// so its type says what the caller reads and writes, and the compiler keeps it from the rest (as ory/fosite hands
/// each handler the storage interface it uses). The composition root makes one per caller with
/// `StoreAccess(store) { $0 }`: the closure narrows the whole transaction to the role.
///
/// Reads and writes mean what `Store`'s do; see there.
public struct StoreAccess<Role>: Sendable {
    private let store: any Store
    private let narrow: @Sendable (any StoreTransaction) -> Role

    public init(_ store: any Store, as narrow: @escaping @Sendable (any StoreTransaction) -> Role) {
        self.store = store
        self.narrow = narrow
    }

    public func read<T>(_ body: (Role) throws -> T) throws -> T {
        try store.read { try body(narrow($0)) }
    }

    public func readOneStatement<T>(_ body: (Role) throws -> T) throws -> T {
        try store.readOneStatement { try body(narrow($0)) }
    }

    public func write<T>(isolation: WriteIsolation = .serializable, _ body: (Role) throws -> T) throws -> T {
        try store.write(isolation: isolation) { try body(narrow($0)) }
    }

    public func write<T: Sendable>(isolation: WriteIsolation = .serializable,
                                   _ body: @escaping @Sendable (Role) throws -> T,
                                   completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        store.write(isolation: isolation, { [narrow] in try body(narrow($0)) }, completion: completion)
    }
}
