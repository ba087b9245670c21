/// A test person who can "sign in" at the simulator.
public struct SimulatedUser: Sendable, Equatable {
    /// Apple's stable user identifier for this person (one per developer team at Apple; one here).
    public var sub: String
    public var email: String
    /// The relay address used when the person chooses "Hide my email".
    public var privateRelayEmail: String
    public var firstName: String
    public var lastName: String

    public init(sub: String, email: String, privateRelayEmail: String, firstName: String, lastName: String) {
        self.sub = sub
        self.email = email
        self.privateRelayEmail = privateRelayEmail
        self.firstName = firstName
        self.lastName = lastName
    }

    public var fullName: String { "\(firstName) \(lastName)" }

    public static let ada = SimulatedUser(
        sub: "001234.simulated.ada", email: "ada@example.com",
        privateRelayEmail: "q7x2ada9kd@privaterelay.appleid.com", firstName: "Ada", lastName: "Lovelace")
    public static let grace = SimulatedUser(
        sub: "001234.simulated.grace", email: "grace@example.com",
        privateRelayEmail: "m4t8grace1p@privaterelay.appleid.com", firstName: "Grace", lastName: "Hopper")
    public static let alan = SimulatedUser(
        sub: "001234.simulated.alan", email: "alan@example.com",
        privateRelayEmail: "z3n6alan5w@privaterelay.appleid.com", firstName: "Alan", lastName: "Turing")

    public static let defaults: [SimulatedUser] = [.ada, .grace, .alan]
}
