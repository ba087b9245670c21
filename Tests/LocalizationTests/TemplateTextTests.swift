import Foundation
import Localization
import Testing

/// Templates hold markup only: every word a person reads comes from a catalog.
@Suite("Templates take their texts from the catalogs")
struct TemplateTextTests {
    static let templatesDirectory = repositoryRoot + "/Templates"

    static func templates() throws -> [(name: String, source: String)] {
        try FileManager.default.contentsOfDirectory(atPath: templatesDirectory).filter { $0.hasSuffix(".mustache") }.sorted()
            .map { ($0, try String(contentsOfFile: templatesDirectory + "/" + $0, encoding: .utf8)) }
    }

    /// The catalog keys a template uses as `{{t.key}}` (or `{{{t.key}}}`).
    static func keys(in source: String) -> Set<String> {
        let regex = try! NSRegularExpression(pattern: #"\{\{\{?\s*t\.([A-Za-z0-9_.\-]+)\s*\}?\}\}"#)
        let range = NSRange(source.startIndex..., in: source)
        return Set(regex.matches(in: source, range: range).compactMap { Range($0.range(at: 1), in: source).map { String(source[$0]) } })
    }

    @Test("Every key a template uses is a text in every catalog")
    func keysExist() throws {
        let catalogs = try Catalogs.load(directory: repositoryRoot + "/Locales")
        var used: Set<String> = []
        for template in try Self.templates() {
            let keys = Self.keys(in: template.source)
            used.formUnion(keys)
            for language in catalogs.languages {
                let messages = catalogs.catalog(language).messages
                let missing = keys.filter { key in
                    guard case .text? = messages[key] else { return true }
                    return false
                }
                #expect(missing.isEmpty, "\(template.name) uses \(missing.sorted()) which \(language).json lacks")
            }
        }
        #expect(used.count > 50, "found only \(used.count) catalog keys in the templates")
    }

    @Test("No template has words of its own: outside tags and {{…}} there is only punctuation")
    func noLiteralText() throws {
        for template in try Self.templates() {
            let leftovers = Self.visibleText(template.source)
            let letters = leftovers.unicodeScalars.filter { CharacterSet.letters.contains($0) }
            #expect(letters.isEmpty, "\(template.name) has text of its own: \(leftovers)")
        }
    }

    @Test("Attributes people read (aria-label, alt, title, placeholder) come from catalogs too")
    func noLiteralAttributes() throws {
        let regex = try NSRegularExpression(pattern: #"\b(aria-label|alt|title|placeholder)="([^"]*)""#)
        for template in try Self.templates() {
            let source = template.source
            for match in regex.matches(in: source, range: NSRange(source.startIndex..., in: source)) {
                let value = String(source[Range(match.range(at: 2), in: source)!])
                let withoutTags = value.replacingOccurrences(of: #"\{\{[^}]*\}\}"#, with: "", options: .regularExpression)
                #expect(withoutTags.trimmingCharacters(in: .whitespaces).isEmpty, "\(template.name): \(value)")
            }
        }
    }

    @Test("The checker itself notices a literal word")
    func checkerNotices() {
        let text = Self.visibleText("<p>{{t.a}}</p><p>Hello</p><svg><path d=\"M1 2\"/></svg>")
        #expect(text.contains("Hello"))
        #expect(Self.keys(in: "<p>{{t.login.heading}}</p>{{{ t.x.y }}}") == ["login.heading", "x.y"])
    }

    /// The template with {{…}}, comments, <svg>…</svg> and tags removed: what a reader would see as literal text.
    static func visibleText(_ source: String) -> String {
        var text = source
        for pattern in [#"\{\{\{[^}]*\}\}\}"#, #"\{\{[^}]*\}\}"#, #"<!--.*?-->"#, #"(?s)<svg.*?</svg>"#, #"<[^>]*>"#, "&[a-z]+;"] {
            text = text.replacingOccurrences(of: pattern, with: " ", options: .regularExpression)
        }
        return text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }
}
