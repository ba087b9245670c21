import Foundation
import Localization
import Testing

/// The repository's Templates/ and Locales/, found from this file.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path

@Suite("Localization")
struct LocalizationTests {
    @Suite("Plural messages")
    struct Plurals {
        let english = Catalog(language: "en", messages: [
            "wait": .plural([.one: "Please wait {count} second.", .other: "Please wait {count} seconds."]),
        ])
        let korean = Catalog(language: "ko", messages: ["wait": .plural([.other: "{count}초 기다려 주세요."])])

        @Test("English picks one for 1 and other for 0, 2 and 1000 (with digit grouping)")
        func englishForms() {
            let one = english.format("wait", count: 1)
            let zero = english.format("wait", count: 0)
            let many = english.format("wait", count: 1000)
            #expect(one == "Please wait 1 second.")
            #expect(zero == "Please wait 0 seconds.")
            #expect(many == "Please wait 1,000 seconds.")
        }

        @Test("Korean has one form for every number")
        func koreanForms() {
            let one = korean.format("wait", count: 1)
            #expect(one == "1초 기다려 주세요.")
            #expect(PluralRules.category(of: 1, language: "ko") == .other)
            #expect(PluralRules.category(of: 1, language: "en-GB") == .one)
            #expect(PluralRules.category(of: 0, language: "fr") == .one)
        }

        @Test("Placeholders are filled; an unknown one stays visible")
        func placeholders() {
            let filled = Catalog.fill("Sign in to {site}", ["site": "Example"])
            let unknown = Catalog.fill("Hello {name}, {site}", ["site": "Example"])
            #expect(filled == "Sign in to Example")
            #expect(unknown == "Hello {name}, Example")
        }
    }

    @Suite("Accept-Language negotiation")
    struct Negotiation {
        let negotiation = LanguageNegotiation(available: ["en", "ko"], defaultLanguage: "en")

        @Test("The highest q-value wins, regional tags fall back to their language, q=0 is refused",
              arguments: [
                  ("ko-KR,ko;q=0.9,en-US;q=0.8,en;q=0.7", "ko"),
                  ("en-US,en;q=0.9,ko;q=0.95", "en"),
                  ("fr-FR, ko;q=0.5, en;q=0.4", "ko"),
                  ("en;q=0.2, ko;q=0.8", "ko"),
                  ("ko;q=0, fr", "en"),
                  ("*", "en"),
                  ("ko;q=abc, en;q=0.1", "en"),
                  ("", "en"),
                  ("zz-@@, ;;;", "en"),
              ])
        func acceptLanguage(header: String, expected: String) {
            let chosen = negotiation.choose(acceptLanguage: header)
            #expect(chosen == expected)
        }

        @Test("An explicit choice beats the remembered one, which beats Accept-Language; unknown choices are ignored")
        func explicitChoice() {
            let explicit = negotiation.choose(explicit: "ko", remembered: "en", acceptLanguage: "en")
            let remembered = negotiation.choose(explicit: nil, remembered: "ko", acceptLanguage: "en")
            let unknown = negotiation.choose(explicit: "xx", remembered: nil, acceptLanguage: "ko")
            #expect(explicit == "ko")
            #expect(remembered == "ko")
            #expect(unknown == "ko")
        }
    }

    @Suite("Dates and numbers per language")
    struct Formats {
        let date = Date(timeIntervalSince1970: 1_796_094_245) // 2026-12-01 03:04:05 UTC

        @Test("A date reads as each language writes it")
        func dates() {
            let english = DateFormatting.dateTime(date, language: "en")
            let korean = DateFormatting.dateTime(date, language: "ko")
            #expect(english.contains("December 1, 2026"), "\(english)")
            #expect(english.hasSuffix("UTC"))
            #expect(korean.contains("2026년 12월 1일"), "\(korean)")
            #expect(DateFormatting.iso8601(date) == "2026-12-01T03:04:05Z")
        }

        @Test("Numbers are grouped per language")
        func numbers() {
            let english = NumberFormatting.integer(1_234_567, language: "en")
            let german = NumberFormatting.integer(1_234_567, language: "de")
            #expect(english == "1,234,567")
            #expect(german == "1.234.567")
        }
    }

    @Suite("The catalogs in Locales/")
    struct Catalogs {
        @Test("Every catalog has every key, with the plural forms its language needs and the same placeholders")
        func consistent() throws {
            let catalogs = try Localization.Catalogs.load(directory: repositoryRoot + "/Locales")
            #expect(catalogs.languages == ["en", "ko"])
            let problems = catalogs.problems()
            #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
        }

        @Test("A catalog that lacks a key, a plural form or a placeholder is reported")
        func checkerFindsGaps() throws {
            let english = Catalog(language: "en", messages: [
                "a": .text("A {site}"), "b": .text("B"),
                "wait": .plural([.one: "{count} second", .other: "{count} seconds"]),
            ])
            let other = Catalog(language: "de", messages: ["a": .text("A"), "wait": .plural([.other: "{count} Sekunden"])])
            let problems = try Localization.Catalogs([english, other]).problems()
            #expect(problems.contains("de.json lacks \"b\""))
            #expect(problems.contains { $0.contains("\"wait\" lacks the plural forms [\"one\"]") })
            #expect(problems.contains { $0.contains("\"a\" uses placeholders []") })
        }

        @Test("A catalog file that is not flat text or plural forms is refused with its key")
        func malformed() {
            let data = Data(#"{"ok": "fine", "bad": 3}"#.utf8)
            var description = ""
            do {
                _ = try Catalog(language: "en", json: data)
            } catch {
                description = String(describing: error)
            }
            #expect(description == "Locales/en.json: \"bad\" must be a text or an object of plural forms")
        }
    }
}
