/// Applies the spec's standalone-line rule: a section, inverted, closing, partial, comment or
/// set-delimiter tag alone on its line (apart from spaces and tabs) removes the whole line,
/// including its newline.
enum StandaloneLines {
    static func remove(from tokens: [Token]) -> [Token] {
        var result: [Token] = []
        result.reserveCapacity(tokens.count)
        var index = 0
        while index < tokens.count {
            if case .tag(var tag) = tokens[index], tag.canStandAlone,
               let indent = indentBeforeLoneTag(in: result),
               let skipCount = lineEndAfterLoneTag(in: tokens, after: index) {
                if !indent.isEmpty { result.removeLast() }  // the indentation text
                result.removeLast()                          // the line start
                tag.standaloneIndent = indent
                result.append(.tag(tag))
                index += 1 + skipCount
            } else {
                result.append(tokens[index])
                index += 1
            }
        }
        return result
    }

    /// The indentation when only spaces and tabs lie between the line start and the tag.
    private static func indentBeforeLoneTag(in processed: [Token]) -> String? {
        switch processed.last {
        case .lineStart:
            return ""
        case .text(let text) where isBlank(text):
            if processed.count >= 2, case .lineStart = processed[processed.count - 2] { return text }
            return nil
        default:
            return nil
        }
    }

    /// How many tokens after the tag to drop (0 or 1) when the rest of the line is blank.
    private static func lineEndAfterLoneTag(in tokens: [Token], after index: Int) -> Int? {
        let next = index + 1
        guard next < tokens.count else { return 0 }
        guard case .text(let text) = tokens[next] else { return nil }
        var body = Substring(text).utf8
        if body.last == UInt8(ascii: "\n") {
            body = body.dropLast()
            if body.last == UInt8(ascii: "\r") { body = body.dropLast() }
            return body.allSatisfy(isSpaceOrTab) ? 1 : nil
        }
        return next == tokens.count - 1 && isBlank(text) ? 1 : nil
    }

    private static func isBlank(_ text: String) -> Bool {
        text.utf8.allSatisfy(isSpaceOrTab)
    }

    private static func isSpaceOrTab(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }
}
