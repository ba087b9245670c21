/// A test's own failure, thrown where an expectation cannot go on (a harness that did not come up, a page without
/// the form a step needs); Swift Testing records it as the test's issue.
public struct TestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
