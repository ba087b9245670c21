/// Why a JSON text was refused, and at which byte.
public struct JSONParseError: Error, Equatable, Sendable, CustomStringConvertible {
    public let reason: String
    public let offset: Int

    public init(_ reason: String, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    public var description: String { "invalid JSON at byte \(offset): \(reason)" }
}
