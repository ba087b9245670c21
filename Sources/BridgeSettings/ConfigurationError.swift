/// A start-up setting that is missing or malformed. Its description is the one line the operator sees.
public struct ConfigurationError: Error, Equatable, CustomStringConvertible {
    public let key: String
    public let problem: String

    public init(_ key: String, _ problem: String) {
        self.key = key
        self.problem = problem
    }

    public var description: String { "configuration error: \(key) \(problem)" }
}
