import Foundation

/// The current wall-clock time, injectable so tests can move it. (Not a `Swift.Clock`: tokens carry Unix times.)
public struct WallClock: Sendable {
    private let read: @Sendable () -> Date

    public init(_ read: @escaping @Sendable () -> Date) { self.read = read }

    public static let system = WallClock { Date() }

    public var now: Date { read() }
}
