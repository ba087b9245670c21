/// Builds the node tree from tokens, matching sections with their closing tags.
struct Parser {
    private struct OpenSection {
        let tag: Tag
        let name: Name
        var children: [Node] = []
    }

    private let fileName: String

    init(fileName: String) {
        self.fileName = fileName
    }

    func parse(_ source: String) throws(TemplateError) -> [Node] {
        let tokens = StandaloneLines.remove(from: try Tokenizer.tokenize(source, fileName: fileName))
        var root: [Node] = []
        var openSections: [OpenSection] = []

        func append(_ node: Node) {
            if openSections.isEmpty {
                root.append(node)
            } else {
                openSections[openSections.count - 1].children.append(node)
            }
        }

        for token in tokens {
            switch token {
            case .lineStart:
                append(.lineStart)
            case .text(let text):
                append(.text(text))
            case .tag(let tag):
                switch tag.kind {
                case .comment, .setDelimiters:
                    break
                case .variable(let escaped):
                    append(.variable(try name(of: tag), escaped: escaped))
                case .section, .invertedSection:
                    openSections.append(OpenSection(tag: tag, name: try name(of: tag)))
                case .close:
                    guard let section = openSections.popLast() else {
                        throw error(at: tag.line, "unexpected closing tag \"\(tag.content)\"")
                    }
                    guard section.tag.content == tag.content else {
                        throw error(at: tag.line, "closing tag \"\(tag.content)\" does not match section \"\(section.tag.content)\" opened at line \(section.tag.line)")
                    }
                    append(.section(section.name, inverted: section.tag.kind == .invertedSection,
                                    children: section.children))
                case .partial:
                    append(.partial(tag.content, indent: tag.standaloneIndent, line: tag.line))
                }
            }
        }
        if let unclosed = openSections.last {
            throw error(at: unclosed.tag.line, "unclosed section \"\(unclosed.tag.content)\"")
        }
        return root
    }

    private func name(of tag: Tag) throws(TemplateError) -> Name {
        guard let name = Name(tag.content) else {
            throw error(at: tag.line, "invalid name \"\(tag.content)\"")
        }
        return name
    }

    private func error(at line: Int, _ message: String) -> TemplateError {
        TemplateError(file: fileName, line: line, message: message)
    }
}
