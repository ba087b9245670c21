/// CLDR plural categories.
public enum PluralCategory: String, Sendable, CaseIterable {
    case zero, one, two, few, many, other
}

/// Which plural form a whole number takes in a language (CLDR rules for integers).
/// Languages not listed here are treated like English, the most common shape (one / other).
public enum PluralRules {
    /// Languages with a single form for every number (CLDR: "other" only).
    static let singleForm: Set<String> = ["ko", "ja", "zh", "th", "vi", "id", "ms", "yue", "lo", "my"]
    /// Languages where 0 and 1 are both "one".
    static let zeroIsOne: Set<String> = ["fr", "hi", "bn", "fa", "pt", "am", "zu"]

    public static func category(of number: Int, language: String) -> PluralCategory {
        let base = primarySubtag(language)
        if singleForm.contains(base) { return .other }
        if zeroIsOne.contains(base) { return number == 0 || number == 1 ? .one : .other }
        return number == 1 ? .one : .other
    }

    /// The forms a catalog of this language needs for a plural message.
    public static func requiredCategories(language: String) -> Set<PluralCategory> {
        singleForm.contains(primarySubtag(language)) ? [.other] : [.one, .other]
    }

    static func primarySubtag(_ tag: String) -> String {
        String(tag.lowercased().split(whereSeparator: { $0 == "-" || $0 == "_" }).first ?? "")
    }
}
