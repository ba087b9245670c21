/// A compiled template. Compile once (e.g. at start-up), render many times.
public struct Template: Sendable {
    public let name: String
    /// The name used in error messages, e.g. `login.mustache`.
    let fileName: String
    let nodes: [Node]

    /// Compiles `source`; `name` is used in error messages.
    public init(source: String, name: String = "template") throws {
        try self.init(source: source, name: name, fileName: name)
    }

    init(source: String, name: String, fileName: String) throws(TemplateError) {
        self.name = name
        self.fileName = fileName
        self.nodes = try Parser(fileName: fileName).parse(source)
    }

    /// Renders without partials (any `{{> partial}}` renders as nothing).
    public func render(_ context: MustacheValue) throws -> String {
        try render(context, partials: [:])
    }

    func render(_ context: MustacheValue, partials: [String: Template]) throws(TemplateError) -> String {
        var renderer = Renderer(context: context, partials: partials)
        try renderer.render(self)
        return renderer.output
    }

    /// The partial names this template refers to, with the line of each reference.
    var partialReferences: [(name: String, line: Int)] {
        var references: [(name: String, line: Int)] = []
        func collect(_ nodes: [Node]) {
            for node in nodes {
                switch node {
                case .partial(let name, _, let line): references.append((name, line))
                case .section(_, _, let children): collect(children)
                case .text, .lineStart, .variable: break
                }
            }
        }
        collect(nodes)
        return references
    }
}
