import JSON
import Testing

@Suite("An object's members in document order")
struct ObjectMembersTests {
    private func members(_ text: String) throws -> [(key: String, value: JSONValue)] {
        try JSONValue.parseObjectMembers(Array(text.utf8))
    }

    @Test("the same members and values as parse, in the order written")
    func sameAsParse() throws {
        let text = #"{"iss":"https://appleid.apple.com","aud":["a","b"],"exp":1764600000,"nested":{"x":[1,{"y":null}]},"t":true}"#
        let read = try members(text)
        #expect(read.map(\.key) == ["iss", "aud", "exp", "nested", "t"])
        guard case let .object(whole) = try JSONValue.parse(text) else { Issue.record("not an object"); return }
        for (key, value) in read { #expect(whole[key] == value) }
        #expect(read.count == whole.count)
        #expect(try members(" { } ").isEmpty)
    }

    @Test("anything but one object is refused, as parse refuses it", arguments: [
        "[1]", "\"text\"", "1", "", "{", #"{"a":1,}"#, #"{"a":1} x"#, #"{"a":1}{"b":2}"#, #"{a:1}"#, #"{"a" 1}"#,
    ])
    func refused(text: String) {
        #expect(throws: JSONParseError.self) { try members(text) }
    }

    @Test("a repeated name is refused, among few members or many", arguments: [2, 16, 17, 40])
    func duplicates(count: Int) throws {
        let distinct = (0..<count).map { "\"k\($0)\":\($0)" }
        #expect(try members("{" + distinct.joined(separator: ",") + "}").count == count)
        for repeated in [0, count - 1] {
            let text = "{" + (distinct + ["\"k\(repeated)\":0"]).joined(separator: ",") + "}"
            #expect(throws: JSONParseError.self) { try members(text) }
        }
    }

    @Test("the size limit and nesting limit hold")
    func limits() throws {
        #expect(throws: JSONParseError.self) { try JSONValue.parseObjectMembers(Array(#"{"a":1}"#.utf8), maxLength: 6) }
        #expect(try JSONValue.parseObjectMembers(Array(#"{"a":1}"#.utf8), maxLength: 7).count == 1)
        let deep = "{\"a\":" + String(repeating: "[", count: JSONValue.maxNestingDepth) + String(repeating: "]", count: JSONValue.maxNestingDepth) + "}"
        #expect(throws: JSONParseError.self) { try members(deep) }
        let deepest = "{\"a\":" + String(repeating: "[", count: JSONValue.maxNestingDepth - 1) + String(repeating: "]", count: JSONValue.maxNestingDepth - 1) + "}"
        #expect(try members(deepest).count == 1)
    }
}
