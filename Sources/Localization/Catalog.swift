import Foundation

/// One language's messages, read from `Locales/<language>.json`: a flat JSON object whose keys are dotted
/// names (`login.heading`) and whose values are either a text or, for messages that depend on a number, an
/// object of plural forms (`{"one": "…{count} second…", "other": "…{count} seconds…"}`).
/// Placeholders are written `{name}` and filled by `format`.
public struct Catalog: Sendable, Equatable {
    public enum Message: Sendable, Equatable {
        case text(String)
        case plural([PluralCategory: String])
    }

    /// The BCP 47 tag of the language, from the file name (`en`, `ko`, `pt-BR`).
    public let language: String
    public let messages: [String: Message]

    public init(language: String, messages: [String: Message]) {
        self.language = language
        self.messages = messages
    }

    public init(language: String, json: Data) throws {
        guard let object = try? JSONSerialization.jsonObject(with: json) as? [String: Any] else {
            throw CatalogError(language: language, key: nil, problem: "is not a JSON object")
        }
        var messages: [String: Message] = [:]
        for (key, value) in object {
            if let text = value as? String {
                messages[key] = .text(text)
            } else if let forms = value as? [String: String] {
                messages[key] = .plural(try Self.pluralForms(forms, language: language, key: key))
            } else {
                throw CatalogError(language: language, key: key, problem: "must be a text or an object of plural forms")
            }
        }
        self.init(language: language, messages: messages)
    }

    private static func pluralForms(_ forms: [String: String], language: String, key: String) throws -> [PluralCategory: String] {
        var result: [PluralCategory: String] = [:]
        for (name, text) in forms {
            guard let category = PluralCategory(rawValue: name) else {
                throw CatalogError(language: language, key: key, problem: "has an unknown plural form \"\(name)\"")
            }
            result[category] = text
        }
        guard result[.other] != nil else {
            throw CatalogError(language: language, key: key, problem: "needs an \"other\" plural form")
        }
        return result
    }

    public var keys: Set<String> { Set(messages.keys) }

    /// The message for `key` with its placeholders filled; a plural message picks its form by `count`.
    /// Nil when the catalog has no such key.
    public func format(_ key: String, count: Int? = nil, _ arguments: [String: String] = [:]) -> String? {
        guard let message = messages[key] else { return nil }
        var arguments = arguments
        let text: String
        switch message {
        case .text(let value):
            text = value
        case .plural(let forms):
            let number = count ?? 0
            let category = PluralRules.category(of: number, language: language)
            text = forms[category] ?? forms[.other] ?? ""
            if arguments["count"] == nil {
                arguments["count"] = NumberFormatting.integer(number, language: language)
            }
        }
        return Self.fill(text, arguments)
    }

    /// Replaces `{name}` with `arguments[name]`; unknown placeholders stay as they are, so a missing argument shows.
    public static func fill(_ text: String, _ arguments: [String: String]) -> String {
        guard !arguments.isEmpty, text.contains("{") else { return text }
        var result = ""
        var rest = text[...]
        while let open = rest.firstIndex(of: "{") {
            result += rest[..<open]
            guard let close = rest[open...].firstIndex(of: "}") else { break }
            let name = String(rest[rest.index(after: open)..<close])
            if let value = arguments[name] { result += value } else { result += rest[open...close] }
            rest = rest[rest.index(after: close)...]
        }
        return result + rest
    }

    /// The placeholder names a text uses, e.g. `["count"]` for "Please wait {count} seconds".
    public static func placeholders(in text: String) -> Set<String> {
        var names: Set<String> = []
        var rest = text[...]
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            names.insert(String(rest[rest.index(after: open)..<close]))
            rest = rest[rest.index(after: close)...]
        }
        return names
    }
}

public struct CatalogError: Error, CustomStringConvertible, Sendable {
    public let language: String
    public let key: String?
    public let problem: String

    public init(language: String, key: String?, problem: String) {
        self.language = language
        self.key = key
        self.problem = problem
    }

    public var description: String {
        if let key { return "Locales/\(language).json: \"\(key)\" \(problem)" }
        return "Locales/\(language).json \(problem)"
    }
}
