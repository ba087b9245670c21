/// The one form of a simulator page as a browser parses it: its action and hidden fields.
public struct HTMLForm {
    public let action: String?
    public let hiddenFields: [(String, String)]

    public init(_ html: String) {
        let document = HTMLDocument(html)
        action = document.first("//form")?.attributes["action"]
        hiddenFields = document.select("//form//input[@type='hidden']").compactMap { input in
            input.attributes["name"].map { ($0, input.attributes["value"] ?? "") }
        }
    }

    public var fieldsByName: [String: String] {
        Dictionary(hiddenFields, uniquingKeysWith: { first, _ in first })
    }
}
