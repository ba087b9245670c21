import Foundation
import Mustache
import Testing

@Suite("MustacheValue")
struct MustacheValueTests {
    @Test func convertsJSONSerializationOutput() throws {
        let json = #"""
            {"t": true, "f": false, "one": 1, "zero": 0, "half": 1.5, "two": 2.0, "s": "x", "n": null,
             "list": [1, "a", false], "nested": {"k": "v"}, "huge": 12345678901234567890}
            """#
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8))
        let expected: MustacheValue = [
            "t": true, "f": false, "one": 1, "zero": 0, "half": 1.5, "two": .double(2), "s": "x", "n": nil,
            "list": [1, "a", false], "nested": ["k": "v"], "huge": .double(Double(UInt64(12345678901234567890))),
        ]
        #expect(MustacheValue(jsonObject: object) == expected)
    }

    @Test func convertsNativeSwiftValues() {
        let native: [String: Any] = ["b": true, "i": 7, "d": 0.25, "s": "x", "a": [false, 1], "n": NSNull()]
        #expect(MustacheValue(jsonObject: native) == ["b": true, "i": 7, "d": 0.25, "s": "x", "a": [false, 1], "n": nil])
    }

    @Test func jsonBooleansDriveSections() throws {
        let object = try JSONSerialization.jsonObject(with: Data(#"{"yes": true, "no": false, "zero": 0}"#.utf8))
        let library = try TemplateLibrary(sources: ["t": "{{#yes}}Y{{/yes}}{{#no}}N{{/no}}{{^no}}!N{{/no}}{{#zero}}0{{/zero}}"])
        #expect(try library.render("t", MustacheValue(jsonObject: object)) == "Y!N0")
    }

    @Test func unsupportedValuesBecomeNull() {
        #expect(MustacheValue(jsonObject: Date()) == .null)
    }
}
