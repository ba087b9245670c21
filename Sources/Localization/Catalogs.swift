import Foundation

/// Every catalog of a `Locales/` folder: one `<language>.json` each, so adding a language is adding a file.
public struct Catalogs: Sendable {
    public let byLanguage: [String: Catalog]
    public let defaultLanguage: String

    public init(_ catalogs: [Catalog], defaultLanguage: String = "en") throws {
        var byLanguage: [String: Catalog] = [:]
        for catalog in catalogs { byLanguage[catalog.language] = catalog }
        guard byLanguage[defaultLanguage] != nil else {
            throw CatalogError(language: defaultLanguage, key: nil, problem: "is missing (the default language)")
        }
        self.byLanguage = byLanguage
        self.defaultLanguage = defaultLanguage
    }

    public static func load(directory: String, defaultLanguage: String = "en") throws -> Catalogs {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw CatalogError(language: defaultLanguage, key: nil, problem: "cannot be read: \(directory) is not a folder")
        }
        let catalogs = try names.filter { $0.hasSuffix(".json") }.sorted().map { name in
            let language = String(name.dropLast(".json".count))
            guard let data = FileManager.default.contents(atPath: directory + "/" + name) else {
                throw CatalogError(language: language, key: nil, problem: "cannot be read")
            }
            return try Catalog(language: language, json: data)
        }
        return try Catalogs(catalogs, defaultLanguage: defaultLanguage)
    }

    /// Languages in a stable order: the default first, then by tag.
    public var languages: [String] {
        [defaultLanguage] + byLanguage.keys.filter { $0 != defaultLanguage }.sorted()
    }

    public var negotiation: LanguageNegotiation {
        LanguageNegotiation(available: languages, defaultLanguage: defaultLanguage)
    }

    /// The catalog for `language`, or the default language's.
    public func catalog(_ language: String) -> Catalog {
        byLanguage[language] ?? byLanguage[defaultLanguage]!
    }

    /// A message in `language`, falling back to the default language, then to the key itself (so a gap shows).
    public func format(_ key: String, language: String, count: Int? = nil, _ arguments: [String: String] = [:]) -> String {
        catalog(language).format(key, count: count, arguments)
            ?? catalog(defaultLanguage).format(key, count: count, arguments)
            ?? key
    }

    public func contains(_ key: String) -> Bool { catalog(defaultLanguage).messages[key] != nil }

    /// What is wrong between the catalogs: a key one has and another lacks, a text in one and a plural in
    /// another, a plural without the forms its language needs, different placeholders for the same message,
    /// or a key that is also the prefix of another key (templates reach keys as nested names).
    public func problems() -> [String] {
        var problems: [String] = []
        let allKeys = byLanguage.values.reduce(into: Set<String>()) { $0.formUnion($1.keys) }
        let reference = catalog(defaultLanguage)
        for language in languages {
            let catalog = self.catalog(language)
            for key in allKeys.subtracting(catalog.keys).sorted() {
                problems.append("\(language).json lacks \"\(key)\"")
            }
            for (key, message) in catalog.messages.sorted(by: { $0.key < $1.key }) {
                problems += Self.compare(key, message, in: language, with: reference.messages[key])
            }
        }
        let sorted = allKeys.sorted()
        for (key, next) in zip(sorted, sorted.dropFirst()) where next.hasPrefix(key + ".") {
            problems.append("\"\(key)\" is both a message and the start of \"\(next)\"")
        }
        return problems
    }

    private static func compare(_ key: String, _ message: Catalog.Message, in language: String,
                                with reference: Catalog.Message?) -> [String] {
        var problems: [String] = []
        switch message {
        case .plural(let forms):
            let missing = PluralRules.requiredCategories(language: language).subtracting(forms.keys)
            if !missing.isEmpty {
                problems.append("\(language).json: \"\(key)\" lacks the plural forms \(missing.map(\.rawValue).sorted())")
            }
            if case .text? = reference { problems.append("\(language).json: \"\(key)\" is plural here but a text in the default language") }
        case .text:
            if case .plural? = reference { problems.append("\(language).json: \"\(key)\" is a text here but plural in the default language") }
        }
        if let reference, placeholders(message) != placeholders(reference) {
            problems.append("\(language).json: \"\(key)\" uses placeholders \(placeholders(message).sorted()), the default language \(placeholders(reference).sorted())")
        }
        return problems
    }

    static func placeholders(_ message: Catalog.Message) -> Set<String> {
        switch message {
        case .text(let text): Catalog.placeholders(in: text)
        case .plural(let forms): forms.values.reduce(into: Set<String>()) { $0.formUnion(Catalog.placeholders(in: $1)) }
        }
    }
}
