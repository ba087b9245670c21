/// One piece of a template source, as the tokenizer cuts it.
///
/// Text is cut after every newline, and each line of the source that has content starts
/// with a `lineStart` token. That makes the standalone-line rules a matter of looking at
/// neighbouring tokens, and the surviving `lineStart`s are where a standalone partial's
/// indentation goes.
enum Token {
    case lineStart
    case text(String)
    case tag(Tag)
}

struct Tag {
    enum Kind: Equatable {
        case variable(escaped: Bool)
        case section
        case invertedSection
        case close
        case partial
        case comment
        case setDelimiters
    }

    var kind: Kind
    /// The trimmed text between the delimiters and sigils: a name, a partial name, a comment.
    var content: String
    /// The line the tag starts on, 1-based.
    var line: Int
    /// The whitespace before a standalone tag; a standalone partial is indented by it.
    var standaloneIndent: String? = nil

    /// Tags that vanish with their whole line when they stand alone on it.
    var canStandAlone: Bool {
        if case .variable = kind { return false }
        return true
    }
}
