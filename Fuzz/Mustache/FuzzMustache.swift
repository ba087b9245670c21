// Template compilation and rendering with a small fixed context.
@testable import Mustache

/// What user data looks like at its worst, and a harmless value of the same truthiness.
private let hostile = #"<script>alert('x')</script>"&"#
private let harmless = "z"

private func context(_ text: String) -> MustacheValue {
    let string = MustacheValue.string(text)
    return [
        "x": string, "name": string, "error": string,
        "user": ["email": string, "name": string, "id": 42],
        "items": [["x": string, "n": 1], string],
        "flag": true, "none": nil, "empty": [], "zero": 0, "half": 0.5,
    ]
}

/// Properties: compiling and rendering never crash, and an escaped tag never lets markup through: unless the
/// template has an unescaped tag (`{{{x}}}`, `{{&x}}`), rendering hostile values adds no `<`, `>`, `"` or `'`
/// to what harmless values render.
func fuzzMustache(_ input: UnsafeBufferPointer<UInt8>) {
    let source = String(decoding: input, as: UTF8.self)
    guard let template = try? Template(source: source, name: "fuzz") else { return }
    // Nested sections over a two-item list render 2^depth times; a slow template is the operator's own.
    guard sectionDepth(template.nodes) <= 8 else { return }
    guard let withHostile = try? template.render(context(hostile)),
          let withHarmless = try? template.render(context(harmless)) else {
        fatalError("a compiled template failed to render")
    }
    guard !hasUnescapedVariable(template.nodes) else { return }
    for markup in "<>\"'".utf8 {
        let added = withHostile.utf8.count(where: { $0 == markup }) - withHarmless.utf8.count(where: { $0 == markup })
        if added != 0 {
            fatalError("{{…}} let \(Unicode.Scalar(markup)) through: \(withHostile.debugDescription)")
        }
    }
}

private func sectionDepth(_ nodes: [Node]) -> Int {
    nodes.reduce(0) { deepest, node in
        guard case .section(_, _, let children) = node else { return deepest }
        return max(deepest, 1 + sectionDepth(children))
    }
}

private func hasUnescapedVariable(_ nodes: [Node]) -> Bool {
    nodes.contains { node in
        switch node {
        case .variable(_, let escaped): !escaped
        case .section(_, _, let children): hasUnescapedVariable(children)
        case .text, .lineStart, .partial: false
        }
    }
}
