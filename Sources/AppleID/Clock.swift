import Foundation

/// The current time, injectable so tests can move it.
public struct Clock: Sendable {
    private let read: @Sendable () -> Date

    public init(_ read: @escaping @Sendable () -> Date) { self.read = read }

    public static let system = Clock { Date() }

    public var now: Date { read() }
}
