import CHTMLQuery

/// An element found in a parsed page.
public struct HTMLElement: Sendable {
    public var name: String
    public var attributes: [String: String]
    public var text: String
}

/// A page parsed by libxml2's HTML parser, queried with XPath — so tests assert on what a browser would see
/// (the link's href, the hidden fields) instead of grepping strings.
public struct HTMLDocument: Sendable {
    public let html: String

    public init(_ html: String) { self.html = html }

    public func select(_ xpath: String) -> [HTMLElement] {
        var elements: UnsafeMutablePointer<html_query_element>?
        let bytes = Array(html.utf8)
        let count = bytes.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                html_query($0, buffer.count, xpath, &elements)
            }
        }
        guard count > 0, let elements else { return [] }
        defer { html_query_free(elements, count) }
        return (0..<Int(count)).map { index in
            let element = elements[index]
            var attributes: [String: String] = [:]
            for attribute in 0..<Int(element.attribute_count) {
                attributes[String(cString: element.attribute_names[attribute]!)] =
                    String(cString: element.attribute_values[attribute]!)
            }
            return HTMLElement(name: String(cString: element.name), attributes: attributes, text: String(cString: element.text))
        }
    }

    public func first(_ xpath: String) -> HTMLElement? { select(xpath).first }

    /// All visible text of the body, whitespace folded.
    public var text: String {
        (first("//body")?.text ?? "").split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }

    /// The inputs of the form matched by `xpath`, in document order.
    public func formFields(_ xpath: String = "//form") -> [(name: String, value: String)] {
        select(xpath + "//input").compactMap { input in
            guard let name = input.attributes["name"] else { return nil }
            return (name, input.attributes["value"] ?? "")
        }
    }
}
