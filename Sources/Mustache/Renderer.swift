/// Renders compiled nodes against a context stack.
struct Renderer {
    /// Guards against a partial that includes itself unconditionally.
    static let maximumPartialDepth = 100

    private let partials: [String: Template]
    private var contextStack: [MustacheValue]
    private(set) var output = ""

    init(context: MustacheValue, partials: [String: Template]) {
        self.partials = partials
        self.contextStack = [context]
    }

    mutating func render(_ template: Template, indent: String = "", depth: Int = 0) throws(TemplateError) {
        try render(template.nodes, in: template, indent: indent, depth: depth)
    }

    private mutating func render(_ node: Node, in template: Template, indent: String, depth: Int) throws(TemplateError) {
        switch node {
        case .text(let text):
            output.append(text)
        case .lineStart:
            output.append(indent)
        case .variable(let name, let escaped):
            let text = resolve(name).interpolatedText
            if escaped { output.appendHTMLEscaped(text) } else { output.append(text) }
        case .section(let name, let inverted, let children):
            let value = resolve(name)
            if inverted {
                if !value.isTruthy { try render(children, in: template, indent: indent, depth: depth) }
            } else if case .array(let items) = value {
                for item in items {
                    try render(children, in: template, pushing: item, indent: indent, depth: depth)
                }
            } else if value.isTruthy {
                try render(children, in: template, pushing: value, indent: indent, depth: depth)
            }
        case .partial(let name, let partialIndent, let line):
            // A missing partial renders as nothing (the spec); TemplateLibrary rejects those at load time.
            guard let partial = partials[name] else { return }
            guard depth < Self.maximumPartialDepth else {
                throw TemplateError(file: template.fileName, line: line,
                                    message: "partials nested more than \(Self.maximumPartialDepth) deep at \"\(name)\"")
            }
            // Only a standalone partial is indented, on top of the indentation it is already in.
            let nestedIndent = partialIndent.map { indent + $0 } ?? ""
            try render(partial, indent: nestedIndent, depth: depth + 1)
        }
    }

    private mutating func render(_ nodes: [Node], in template: Template, pushing context: MustacheValue,
                                 indent: String, depth: Int) throws(TemplateError) {
        contextStack.append(context)
        defer { contextStack.removeLast() }
        try render(nodes, in: template, indent: indent, depth: depth)
    }

    private mutating func render(_ nodes: [Node], in template: Template, indent: String, depth: Int) throws(TemplateError) {
        for node in nodes {
            try render(node, in: template, indent: indent, depth: depth)
        }
    }

    /// The first key is looked up from the innermost context outwards; the rest of a dotted
    /// name only within what the first key found (the spec's "broken chain" rule).
    private func resolve(_ name: Name) -> MustacheValue {
        switch name {
        case .implicitIterator:
            return contextStack.last ?? .null
        case .path(let first, let rest):
            guard var value = lookUp(first) else { return .null }
            for key in rest {
                guard case .object(let object) = value, let child = object[key] else { return .null }
                value = child
            }
            return value
        }
    }

    private func lookUp(_ key: String) -> MustacheValue? {
        for context in contextStack.reversed() {
            if case .object(let object) = context, let value = object[key] {
                return value
            }
        }
        return nil
    }
}
