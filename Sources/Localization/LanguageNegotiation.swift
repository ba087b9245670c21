import Foundation

/// Picks the page language: an explicit choice (`?lang=` or the remembered cookie) if it names an available
/// language, else the best match for the browser's `Accept-Language` by q-value, else the default.
public struct LanguageNegotiation: Sendable {
    public let available: [String]
    public let defaultLanguage: String

    public init(available: [String], defaultLanguage: String) {
        self.available = available
        self.defaultLanguage = defaultLanguage
    }

    public func choose(explicit: String? = nil, remembered: String? = nil, acceptLanguage: String? = nil) -> String {
        for choice in [explicit, remembered] {
            if let choice, let language = match(choice, allowPrefix: false) { return language }
        }
        for (tag, _) in Self.preferences(acceptLanguage ?? "") {
            if tag == "*" { return defaultLanguage }
            if let language = match(tag, allowPrefix: true) { return language }
        }
        return defaultLanguage
    }

    /// An available language for `tag`: the same tag, else the same primary language (`ko-KR` → `ko`).
    /// With `allowPrefix`, a bare tag also matches a regional catalog (`pt` → `pt-BR`).
    public func match(_ tag: String, allowPrefix: Bool) -> String? {
        let wanted = Self.normalized(tag)
        guard !wanted.isEmpty else { return nil }
        if let exact = available.first(where: { Self.normalized($0) == wanted }) { return exact }
        let primary = PluralRules.primarySubtag(wanted)
        if let base = available.first(where: { Self.normalized($0) == primary }) { return base }
        guard allowPrefix else { return nil }
        return available.first { PluralRules.primarySubtag($0) == primary }
    }

    /// The languages of an `Accept-Language` header, best first; q=0 (not acceptable) and malformed entries dropped.
    /// Equal q-values keep the header's order.
    public static func preferences(_ header: String) -> [(tag: String, quality: Double)] {
        var entries: [(tag: String, quality: Double, position: Int)] = []
        for (position, part) in header.split(separator: ",").prefix(32).enumerated() {
            let pieces = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let tag = pieces.first, isLanguageRange(tag) else { continue }
            var quality = 1.0
            for parameter in pieces.dropFirst() where parameter.lowercased().hasPrefix("q=") {
                guard let value = Double(parameter.dropFirst(2)), value >= 0, value <= 1 else { quality = -1; break }
                quality = value
            }
            if quality > 0 { entries.append((tag, quality, position)) }
        }
        entries.sort { $0.quality != $1.quality ? $0.quality > $1.quality : $0.position < $1.position }
        return entries.map { ($0.tag, $0.quality) }
    }

    static func isLanguageRange(_ tag: String) -> Bool {
        if tag == "*" { return true }
        guard !tag.isEmpty, tag.count <= 35 else { return false }
        return tag.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
    }

    static func normalized(_ tag: String) -> String {
        tag.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "_", with: "-").lowercased()
    }
}

