import HTTPServer
import Testing

/// The form parser works on contiguous bytes; this is the plain reading of the rules it must match.
private func referenceParse(_ bytes: [UInt8]) -> [FormFields.Pair] {
    func decode(_ part: ArraySlice<UInt8>) -> String {
        var out: [UInt8] = []
        var index = part.startIndex
        while index < part.endIndex {
            let byte = part[index]
            if byte == UInt8(ascii: "+") {
                out.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), index + 2 < part.endIndex,
                      let high = UInt8(String(decoding: part[index + 1...index + 2], as: UTF8.self), radix: 16),
                      part[index + 1...index + 2].allSatisfy({ $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "-") }) {
                out.append(high)
                index += 2
            } else {
                out.append(byte)
            }
            index += 1
        }
        return String(decoding: out, as: UTF8.self)
    }
    return bytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true).map { part in
        guard let equals = part.firstIndex(of: UInt8(ascii: "=")) else { return FormFields.Pair(decode(part), "") }
        return FormFields.Pair(decode(part[..<equals]), decode(part[(equals + 1)...]))
    }
}

@Suite("Form bodies and query strings")
struct FormFieldsTests {
    @Test("names, values, +, escapes, empty parts and broken escapes", arguments: [
        ("a=1&b=two+words&c=%2F", [("a", "1"), ("b", "two words"), ("c", "/")]),
        ("&&a=&=b&c", [("a", ""), ("", "b"), ("c", "")]),
        ("x=%zz%4&y=%41%4a%", [("x", "%zz%4"), ("y", "AJ%")]),
        ("k=a=b=c&state=%E2%9C%93", [("k", "a=b=c"), ("state", "✓")]),
        ("%", [("%", "")]),
        ("n=%2", [("n", "%2")]),
        ("", []),
    ])
    func cases(input: String, expected: [(String, String)]) {
        #expect(FormFields(urlEncoded: input) == FormFields(expected))
    }

    @Test("any bytes parse as the plain reading of the rules does (20,000 random forms)")
    func matchesReference() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ab=&+%2F4a9zZ-.~ é".utf8) + [0x00, 0xFF, 0x80]
        var differences: [String] = []
        for _ in 0..<20_000 {
            let length = Int.random(in: 0...24, using: &generator)
            let bytes = (0..<length).map { _ in alphabet.randomElement(using: &generator)! }
            let parsed = FormFields(urlEncoded: bytes)
            if parsed.pairs != referenceParse(bytes) { differences.append("\(bytes)") }
            // A non-contiguous collection takes the same path.
            if FormFields(urlEncoded: bytes.lazy.map { $0 }) != parsed { differences.append("lazy \(bytes)") }
        }
        #expect(differences.isEmpty, "\(differences.prefix(3))")
    }
}

@Suite("The media type of a request body")
struct MediaTypeTests {
    @Test("parameters and spaces go, ASCII letters are lowered, an empty type is none", arguments: [
        ("Application/X-WWW-Form-Urlencoded ; charset=utf-8", "application/x-www-form-urlencoded"),
        ("\tapplication/json", "application/json"),
        ("TEXT/HTML;charset=utf-8;x=y", "text/html"),
        ("  ", nil),
        (";charset=utf-8", nil),
        ("", nil),
        ("ÀPPLICATION/JSON; q=1", "àpplication/json"),
    ] as [(String, String?)])
    func mediaType(header: String, expected: String?) {
        let request = Request(method: "POST", path: "/", headers: HTTPHeaders([("Content-Type", header)]))
        #expect(request.mediaType == expected)
        // The in-place comparison agrees with the media type for every header.
        #expect(request.hasMediaType("application/x-www-form-urlencoded") == (expected == "application/x-www-form-urlencoded"))
        #expect(request.hasMediaType("application/json") == (expected == "application/json"))
        #expect(request.hasMediaType("text/html") == (expected == "text/html"))
    }

    @Test("no Content-Type, no media type")
    func missing() {
        #expect(Request(method: "POST", path: "/").mediaType == nil)
        #expect(!Request(method: "POST", path: "/").hasMediaType("application/json"))
    }
}
