/// A compiled template: a tree of nodes, rendered without re-parsing.
indirect enum Node: Sendable {
    case text(String)
    /// The start of a template line; a standalone partial's indentation is written here.
    case lineStart
    case variable(Name, escaped: Bool)
    case section(Name, inverted: Bool, children: [Node])
    /// `indent` is nil for a partial inside a line; a standalone one has its line's leading whitespace.
    case partial(String, indent: String?, line: Int)
}

/// A variable or section name: `.` or a dotted path such as `user.email`.
enum Name: Sendable {
    case implicitIterator
    case path(first: String, rest: [String])

    init?(_ text: String) {
        if text == "." {
            self = .implicitIterator
            return
        }
        let keys = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !keys.contains(where: \.isEmpty) else { return nil }
        self = .path(first: keys[0], rest: Array(keys.dropFirst()))
    }
}
