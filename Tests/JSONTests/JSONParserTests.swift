import JSON
import Testing

@Suite("JSONValue parsing")
struct JSONParserTests {
    @Suite("accepts")
    struct Accepts {
        @Test("scalars at the top level")
        func scalars() throws {
            #expect(try JSONValue.parse("null") == .null)
            #expect(try JSONValue.parse("true") == .bool(true))
            #expect(try JSONValue.parse(" false ") == .bool(false))
            #expect(try JSONValue.parse("\"hi\"") == .string("hi"))
            #expect(try JSONValue.parse("42") == .number(42))
        }

        @Test("an Apple-shaped claims object, with typed accessors")
        func claimsObject() throws {
            let json = """
                {"iss":"https://appleid.apple.com","aud":"com.example.web","exp":1764600000,"iat":1764500000,
                 "sub":"001234.abc.1234","email_verified":"true","is_private_email":true,"real_user_status":2,
                 "amr":["pwd"],"nested":{"a":null}}
                """
            let value = try JSONValue.parse(json)
            #expect(value["iss"]?.stringValue == "https://appleid.apple.com")
            #expect(value["exp"]?.int64Value == 1_764_600_000)
            #expect(value["exp"]?.doubleValue == 1_764_600_000)
            #expect(value["is_private_email"]?.boolValue == true)
            #expect(value["email_verified"]?.boolValue == nil)
            #expect(value["real_user_status"]?.int64Value == 2)
            #expect(value["amr"] == .array(["pwd"]))
            #expect(value["nested"]?["a"] == .null)
            #expect(value["missing"] == nil)
            #expect(value["iss"]?["x"] == nil)
        }

        @Test("numbers in every RFC 8259 form", arguments: [
            ("0", 0.0), ("-0", -0.0), ("7", 7), ("-12", -12), ("1.5", 1.5), ("-0.25", -0.25),
            ("1e3", 1000), ("1E+3", 1000), ("25e-2", 0.25), ("1.5e2", 150),
            ("123456789012345", 123_456_789_012_345), ("9007199254740993", 9_007_199_254_740_992),
            ("0.1", 0.1), ("1e308", 1e308),
        ])
        func numbers(text: String, expected: Double) throws {
            #expect(try JSONValue.parse(text) == .number(expected))
        }

        @Test("int64Value only for integral, in-range numbers")
        func integerAccess() throws {
            #expect(try JSONValue.parse("1.5").int64Value == nil)
            #expect(try JSONValue.parse("1e300").int64Value == nil)
            #expect(try JSONValue.parse("-3").int64Value == -3)
            #expect(try JSONValue.parse("\"3\"").int64Value == nil)
        }

        @Test("every escape, including surrogate pairs")
        func escapes() throws {
            let value = try JSONValue.parse(#""q\" b\\ s\/ \b\f\n\r\t \u0041\u00e9\u20AC \ud83d\ude00""#)
            #expect(value == .string("q\" b\\ s/ \u{08}\u{0C}\n\r\t Aé€ 😀"))
        }

        @Test("raw UTF-8 of every length")
        func unicode() throws {
            let text = "é € 😀 한국어 \u{7F}"
            #expect(try JSONValue.parse("\"\(text)\"") == .string(text))
            #expect(try JSONValue.parse("{\"이름\":\"홍길동\"}")["이름"] == .string("홍길동"))
        }

        @Test("nesting up to the limit")
        func nestingAtLimit() throws {
            let depth = JSONValue.maxNestingDepth
            let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            _ = try JSONValue.parse(text)
            let objects = String(repeating: "{\"a\":", count: depth) + "1" + String(repeating: "}", count: depth)
            _ = try JSONValue.parse(objects)
        }

        @Test("empty containers and insignificant whitespace")
        func emptyContainers() throws {
            #expect(try JSONValue.parse(" { } ") == .object([:]))
            #expect(try JSONValue.parse("[ ]") == .array([]))
            #expect(try JSONValue.parse("\t[ 1 ,\r\n 2 ]\n") == .array([1, 2]))
        }

        @Test("many small objects in one document")
        func manyObjects() throws {
            let text = "[" + Array(repeating: "{\"a\":1,\"b\":[true]}", count: 2000).joined(separator: ",") + "]"
            let value = try JSONValue.parse(text)
            #expect(value.arrayValue?.count == 2000)
            #expect(value.arrayValue?.last?["b"] == [true])
        }
    }

    @Suite("refuses")
    struct Refuses {
        @Test("malformed documents", arguments: [
            "", " ", "{", "}", "[1,]", "[,1]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "{'a':1}", "[1 2]",
            "01", "-", "1.", ".5", "1e", "1e+", "+1", "0x10", "NaN", "Infinity", "1e400",
            "tru", "nul", "True", "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\u12G4\"", "\"a\u{01}b\"", "\"tab\there\"",
            "[1] [2]", "{} x", "// c\n1", "\u{FEFF}1",
            "\"\\ud83d\"", "\"\\ude00\"", "\"\\ud83d\\u0041\"", "\"\\ud83dx\"",
        ])
        func malformed(text: String) {
            #expect(throws: JSONParseError.self) { try JSONValue.parse(text) }
        }

        @Test("invalid UTF-8", arguments: [
            [0x22, 0xC3, 0x22], [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xE0, 0x80, 0xAF, 0x22],
            [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], [0x22, 0xFF, 0x22],
            [0x22, 0x5C, 0x6E, 0xC3, 0x22],
        ] as [[UInt8]])
        func invalidUTF8(bytes: [UInt8]) {
            #expect(throws: JSONParseError.self) { try JSONValue.parse(bytes) }
        }

        @Test("nesting one level past the limit")
        func tooDeep() {
            let depth = JSONValue.maxNestingDepth + 1
            let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            #expect(throws: JSONParseError.self) { try JSONValue.parse(text) }
            let deepObjects = String(repeating: "{\"a\":", count: 10_000)
            #expect(throws: JSONParseError.self) { try JSONValue.parse(deepObjects) }
        }

        @Test("duplicate object keys")
        func duplicateKeys() {
            #expect(throws: JSONParseError("duplicate object key", at: 12)) {
                try JSONValue.parse(#"{"sub":"a", "sub":"b"}"#)
            }
        }

        @Test("documents over the size limit")
        func tooLarge() throws {
            #expect(throws: JSONParseError.self) { try JSONValue.parse("[1, 2, 3]", maxLength: 8) }
            #expect(try JSONValue.parse("[1, 2, 3]", maxLength: 9) == [1, 2, 3])
        }

        @Test("errors name the byte offset")
        func offsets() {
            #expect(throws: JSONParseError("expected ',' or ']' in array", at: 3)) { try JSONValue.parse("[1 2]") }
            #expect(throws: JSONParseError("leading zero in number", at: 1)) { try JSONValue.parse("01") }
        }
    }
}

@Suite("JSONValue serialization")
struct JSONSerializerTests {
    @Test("sorted keys and compact output")
    func sortedKeys() {
        let value: JSONValue = ["b": 1, "a": [true, nil, "x"], "c": ["z": 1.5, "y": -2]]
        #expect(value.serialized() == #"{"a":[true,null,"x"],"b":1,"c":{"y":-2,"z":1.5}}"#)
    }

    @Test("escapes quotes, backslashes and control characters")
    func escapes() {
        let value = JSONValue.string("a\"b\\c\n\r\t\u{08}\u{0C}\u{01}\u{1F}/é😀")
        #expect(value.serialized() == #""a\"b\\c\n\r\t\b\f\u0001\u001f/é😀""#)
    }

    @Test("integers print without a fraction; non-finite numbers become null")
    func numbers() {
        #expect(JSONValue.integer(1_764_600_000).serialized() == "1764600000")
        #expect(JSONValue.number(-0.0).serialized() == "0")
        #expect(JSONValue.number(0.5).serialized() == "0.5")
        #expect(JSONValue.number(1e300).serialized() == "1e+300")
        #expect(JSONValue.number(.nan).serialized() == "null")
        #expect(JSONValue.number(.infinity).serialized() == "null")
    }

    @Test("parse(serialized()) gives back the same value")
    func roundTrip() throws {
        let value: JSONValue = [
            "s": "line\nbreak \u{0} é 😀", "n": 12.75, "i": 9_007_199_254_740_991, "neg": -1e-7,
            "b": false, "null": nil, "list": [[], [:], ["k": "v"]],
        ]
        #expect(try JSONValue.parse(value.serialized()) == value)
        #expect(try JSONValue.parse(value.serializedBytes()) == value)
    }
}
