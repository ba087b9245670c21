/// An ordered list of header fields with case-insensitive lookup.
public struct HTTPHeaders: Sendable, Sequence {
    public private(set) var fields: [(name: String, value: String)] = []

    public init(_ fields: [(String, String)] = []) {
        self.fields = fields.map { (name: $0.0, value: $0.1) }
    }

    public subscript(name: String) -> String? {
        fields.first { Self.sameName($0.name, name) }?.value
    }

    public func values(_ name: String) -> [String] {
        fields.filter { Self.sameName($0.name, name) }.map(\.value)
    }

    /// ASCII case-insensitive comparison without allocating (header names are ASCII tokens).
    static func sameName(_ a: String, _ b: String) -> Bool {
        // Lengths first: a native string knows its count, and most names a lookup passes differ in length.
        guard a.utf8.count == b.utf8.count else { return false }
        var a = a, b = b
        return a.withUTF8 { x in b.withUTF8 { y in ASCII.equalsIgnoringCase(x, y) } }
    }

    /// Each field with its name as bytes, as the listener hands them to `RequestHead` (tests and the fuzz target
    /// check fields they built themselves this way).
    func forEachField(_ body: (_ name: UnsafeBufferPointer<UInt8>, _ value: String) -> Void) {
        for field in fields {
            var name = field.name
            name.withUTF8 { body($0, field.value) }
        }
    }

    public func contains(_ name: String) -> Bool { self[name] != nil }

    /// Adds a field, keeping existing fields of the same name (e.g. several Set-Cookie).
    public mutating func add(_ name: String, _ value: String) {
        reserveRoomForTypicalFields()
        fields.append((name: name, value: value))
    }

    /// Replaces every field of this name with one field.
    public mutating func set(_ name: String, _ value: String) {
        remove(name)
        reserveRoomForTypicalFields()
        fields.append((name: name, value: value))
    }

    /// A request or response carries about a dozen fields, added one by one: growing the array from one field
    /// (1, 2, 4, 8, 16) reallocated and copied it four or five times per message.
    private mutating func reserveRoomForTypicalFields() {
        if fields.count == fields.capacity && fields.capacity < 16 { fields.reserveCapacity(16) }
    }

    public mutating func remove(_ name: String) {
        fields.removeAll { Self.sameName($0.name, name) }
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        fields.makeIterator()
    }
}
