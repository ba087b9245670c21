import AppleID
import Foundation
import Synchronization

/// The clock tests move by hand, given to the code under test as its `WallClock`.
///
/// `TestClock()` runs with real time plus what the test advanced it by: for tests beside something that keeps real
/// time itself (the Apple ID simulator signs tokens with it, sockets time out by it). `TestClock(frozenAt:)` stands
/// still until advanced: for tests that compare times exactly.
public final class TestClock: Sendable {
    private let frozenStart: Date?
    private let offset = Mutex<TimeInterval>(0)

    public init() { frozenStart = nil }

    public init(frozenAt start: Date) { frozenStart = start }

    public var now: Date { (frozenStart ?? Date()).addingTimeInterval(offset.withLock { $0 }) }

    public var clock: WallClock { WallClock { [self] in now } }

    public func advance(by seconds: TimeInterval) { offset.withLock { $0 += seconds } }
}
