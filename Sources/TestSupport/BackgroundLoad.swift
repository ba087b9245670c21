import Foundation

/// A test's background load on threads of its own, started at once and waited for with `wait()`. Not on Dispatch's
/// shared pool: busy with the suites that run alongside, it once started such a load so late that a fault test's
/// outage passed with no call made during it.
public final class BackgroundLoad: Sendable {
    private let finished = DispatchGroup()

    /// Runs `body(index)` on each of `threads` new threads.
    public init(threads: Int, _ body: @escaping @Sendable (_ index: Int) -> Void) {
        for index in 0..<threads {
            finished.enter()
            Thread.detachNewThread { [finished] in
                body(index)
                finished.leave()
            }
        }
    }

    public func wait() {
        finished.wait()
    }
}
