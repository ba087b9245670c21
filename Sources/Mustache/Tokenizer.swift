/// Cuts a template source into tokens, following set-delimiter tags as it goes.
struct Tokenizer {
    private let source: [UInt8]
    private let fileName: String
    private var openDelimiter = Array("{{".utf8)
    private var closeDelimiter = Array("}}".utf8)
    private var position = 0
    private var line = 1
    private var tokens: [Token] = []

    init(source: String, fileName: String) {
        self.source = Array(source.utf8)
        self.fileName = fileName
    }

    static func tokenize(_ source: String, fileName: String) throws(TemplateError) -> [Token] {
        var tokenizer = Tokenizer(source: source, fileName: fileName)
        return try tokenizer.run()
    }

    private mutating func run() throws(TemplateError) -> [Token] {
        if !source.isEmpty { tokens.append(.lineStart) }
        while position < source.count {
            guard let tagStart = find(openDelimiter, from: position) else {
                appendText(upTo: source.count)
                break
            }
            appendText(upTo: tagStart)
            tokens.append(.tag(try readTag(at: tagStart)))
        }
        return tokens
    }

    /// Appends `source[position..<end]` as text tokens, one per line.
    private mutating func appendText(upTo end: Int) {
        var pieceStart = position
        for index in position..<end where source[index] == newline {
            tokens.append(.text(string(pieceStart...index)))
            line += 1
            pieceStart = index + 1
            if pieceStart < source.count { tokens.append(.lineStart) }
        }
        if pieceStart < end { tokens.append(.text(string(pieceStart..<end))) }
        position = end
    }

    private mutating func readTag(at tagStart: Int) throws(TemplateError) -> Tag {
        let tagLine = line
        var contentStart = tagStart + openDelimiter.count
        let sigil = contentStart < source.count ? source[contentStart] : 0
        let kind: Tag.Kind
        var terminator = closeDelimiter
        switch sigil {
        case UInt8(ascii: "{"):
            kind = .variable(escaped: false)
            terminator = Array("}".utf8) + closeDelimiter
        case UInt8(ascii: "&"): kind = .variable(escaped: false)
        case UInt8(ascii: "#"): kind = .section
        case UInt8(ascii: "^"): kind = .invertedSection
        case UInt8(ascii: "/"): kind = .close
        case UInt8(ascii: ">"): kind = .partial
        case UInt8(ascii: "!"): kind = .comment
        case UInt8(ascii: "="):
            kind = .setDelimiters
            terminator = Array("=".utf8) + closeDelimiter
        default: kind = .variable(escaped: true)
        }
        if kind != .variable(escaped: true) { contentStart += 1 }

        guard let contentEnd = find(terminator, from: contentStart) else {
            throw TemplateError(file: fileName, line: tagLine,
                                message: "unclosed tag: missing \"\(String(decoding: terminator, as: UTF8.self))\"")
        }
        let tagEnd = contentEnd + terminator.count
        line += source[tagStart..<tagEnd].count(where: { $0 == newline })
        position = tagEnd

        let content = trimmed(contentStart..<contentEnd)
        if kind == .setDelimiters {
            try setDelimiters(from: content, line: tagLine)
        } else if kind != .comment && content.isEmpty {
            throw TemplateError(file: fileName, line: tagLine, message: "empty tag")
        }
        return Tag(kind: kind, content: content, line: tagLine)
    }

    /// `{{=<% %>=}}`: two delimiters separated by whitespace, neither containing whitespace or `=`.
    private mutating func setDelimiters(from content: String, line: Int) throws(TemplateError) {
        let parts = content.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" })
        guard parts.count == 2, !parts.contains(where: { $0.contains("=") }) else {
            throw TemplateError(file: fileName, line: line, message: "invalid delimiters \"\(content)\"")
        }
        openDelimiter = Array(parts[0].utf8)
        closeDelimiter = Array(parts[1].utf8)
    }

    private func find(_ needle: [UInt8], from start: Int) -> Int? {
        guard let first = needle.first, source.count >= needle.count else { return nil }
        var index = start
        let lastStart = source.count - needle.count
        while index <= lastStart {
            if source[index] == first && source[index..<index + needle.count].elementsEqual(needle) {
                return index
            }
            index += 1
        }
        return nil
    }

    private func trimmed(_ range: Range<Int>) -> String {
        var lower = range.lowerBound
        var upper = range.upperBound
        while lower < upper && isWhitespace(source[lower]) { lower += 1 }
        while upper > lower && isWhitespace(source[upper - 1]) { upper -= 1 }
        return string(lower..<upper)
    }

    private func string<R: RangeExpression<Int>>(_ range: R) -> String {
        String(decoding: source[range], as: UTF8.self)
    }

    private func isWhitespace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == newline || byte == UInt8(ascii: "\r")
    }

    private let newline = UInt8(ascii: "\n")
}
