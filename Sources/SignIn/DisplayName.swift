import Foundation
import JOSE
import JSON

/// A person's name as a client sent it: unsigned, so only ever a name (any email next to it is ignored),
/// cleaned one way whatever shape it came in.
package enum DisplayName {
    package static let maximumLength = 200

    /// The name in Apple's `user` JSON, which the callback receives on the first sign-in only.
    package static func fromUserJSON(_ text: String?) -> String? {
        guard let text, !text.isEmpty, text.utf8.count <= 4096, let json = try? JSONValue.parse(Array(text.utf8)) else {
            return nil
        }
        return fromComponents(json["name"])
    }

    /// A name from an API body: Apple's `user` JSON (object or string), iOS's encoded `PersonNameComponents` as
    /// `fullName`, a plain `fullName` string, or a plain `snsUserName` or `name`.
    package static func fromAPIBody(_ body: JSONValue) -> String? {
        if let user = body["user"] {
            if case .object = user, let name = fromComponents(user["name"]) { return name }
            if let text = user.stringValue, text.hasPrefix("{"), let name = fromUserJSON(text) { return name }
        }
        if let fullName = body["fullName"] {
            if let name = fromComponents(fullName) { return name }
            if let text = fullName.stringValue { return clean(text) }
        }
        for field in ["snsUserName", "name"] {
            if let text = body[field]?.stringValue, let name = clean(text) { return name }
        }
        return nil
    }

    /// Given and family name from Apple's (`firstName`, `lastName`) or iOS's (`givenName`, `familyName`) keys.
    package static func fromComponents(_ value: JSONValue?) -> String? {
        guard let value, case .object = value else { return nil }
        let given = value["firstName"]?.stringValue ?? value["givenName"]?.stringValue
        let family = value["lastName"]?.stringValue ?? value["familyName"]?.stringValue
        let parts = [given, family].compactMap { $0?.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
        return clean(parts.joined(separator: " "))
    }

    /// Without control characters or surrounding space, at most `maximumLength` characters; nil when nothing is left.
    package static func clean(_ name: String) -> String? {
        let printable = name.filter { !$0.isNewline && !($0.asciiValue.map { $0 < 0x20 } ?? false) }
        let trimmed = printable.trimmingCharacters(in: .whitespaces)
        return trimmed.isEmpty ? nil : String(trimmed.prefix(maximumLength))
    }
}
