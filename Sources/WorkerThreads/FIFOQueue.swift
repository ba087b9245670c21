/// A first-in, first-out queue on an array: taking from the front is O(1), and taken slots are dropped now and
/// then, also while the queue never runs empty (a long-lived queue under steady load would otherwise keep every
/// element it ever held, with everything those hold). Not thread-safe: guard it with the owner's lock.
public struct FIFOQueue<Element> {
    private var elements: [Element] = []
    private var head = 0

    public init() {}

    public var count: Int { elements.count - head }
    public var isEmpty: Bool { head == elements.count }

    public mutating func append(_ element: Element) { elements.append(element) }

    public mutating func popFirst() -> Element? {
        guard head < elements.count else { return nil }
        let element = elements[head]
        head += 1
        if head == elements.count {
            elements.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64 && head * 2 >= elements.count {
            elements.removeFirst(head)
            head = 0
        }
        return element
    }
}
