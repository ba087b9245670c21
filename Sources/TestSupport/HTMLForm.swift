import TestSupport

/// The one form of a simulator page as a browser parses it: its action and hidden fields.
struct HTMLForm {
    let action: String?
    let hiddenFields: [(String, String)]

    init(_ html: String) {
        let document = HTMLDocument(html)
        action = document.first("//form")?.attributes["action"]
        hiddenFields = document.select("//form//input[@type='hidden']").compactMap { input in
            input.attributes["name"].map { ($0, input.attributes["value"] ?? "") }
        }
    }

    var fieldsByName: [String: String] {
        Dictionary(hiddenFields, uniquingKeysWith: { first, _ in first })
    }
}
