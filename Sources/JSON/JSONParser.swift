extension JSONValue {
    /// Default cap on the size of a JSON text accepted by `parse`.
    public static let defaultMaxLength = 1 << 20
    /// Arrays and objects may nest this deep, and no deeper.
    public static let maxNestingDepth = 32

    /// Parses one JSON text strictly per RFC 8259: no comments, no trailing commas, no
    /// leading zeros, no lone surrogates, valid UTF-8 only, no duplicate object keys.
    @inlinable
    public static func parse(
        _ bytes: some Collection<UInt8>, maxLength: Int = defaultMaxLength
    ) throws(JSONParseError) -> JSONValue {
        try withContiguousBytes(bytes) { buffer throws(JSONParseError) in try parse(buffer: buffer, maxLength: maxLength) }
    }

    @usableFromInline
    static func parse(buffer: UnsafeBufferPointer<UInt8>, maxLength: Int) throws(JSONParseError) -> JSONValue {
        guard buffer.count <= maxLength else { throw JSONParseError("document is larger than \(maxLength) bytes", at: 0) }
        var parser = JSONParser(buffer)
        return try parser.parseDocument()
    }

    /// The members of a JSON text that must be one object, in document order, under the same rules as `parse`
    /// (duplicate names refused). For a reader that picks a few known names out of a small object, such as a
    /// token's claims: no dictionary is built, and no name is hashed, neither the object's nor the reader's.
    @inlinable
    public static func parseObjectMembers(
        _ bytes: some Collection<UInt8>, maxLength: Int = defaultMaxLength
    ) throws(JSONParseError) -> [(key: String, value: JSONValue)] {
        try withContiguousBytes(bytes) { buffer throws(JSONParseError) in try parseObjectMembers(buffer: buffer, maxLength: maxLength) }
    }

    @usableFromInline
    static func parseObjectMembers(buffer: UnsafeBufferPointer<UInt8>,
                                   maxLength: Int) throws(JSONParseError) -> [(key: String, value: JSONValue)] {
        guard buffer.count <= maxLength else { throw JSONParseError("document is larger than \(maxLength) bytes", at: 0) }
        var parser = JSONParser(buffer)
        return try parser.parseObjectDocument()
    }

    /// Parses the UTF-8 of `text`.
    public static func parse(_ text: String, maxLength: Int = defaultMaxLength) throws(JSONParseError) -> JSONValue {
        try parse(text.utf8, maxLength: maxLength)
    }
}

/// A recursive-descent parser over a borrowed byte buffer.
struct JSONParser {
    private let input: UnsafeBufferPointer<UInt8>
    private var position = 0
    private var presizedObjectsLeft = 8

    init(_ input: UnsafeBufferPointer<UInt8>) {
        self.input = input
    }

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        skipWhitespace()
        let value = try parseValue(depth: 0)
        skipWhitespace()
        guard position == input.count else { throw failure("unexpected characters after the value") }
        return value
    }

    mutating func parseObjectDocument() throws(JSONParseError) -> [(key: String, value: JSONValue)] {
        skipWhitespace()
        guard position < input.count, input[position] == UInt8(ascii: "{") else { throw failure("expected an object") }
        position += 1
        var members: [(key: String, value: JSONValue)] = []
        skipWhitespace()
        if !consume(UInt8(ascii: "}")) {
            members.reserveCapacity(16)
            // Names are compared pairwise while there are few; beyond that a set keeps a large object linear.
            var names: Set<String>?
            while true {
                let (key, keyOffset) = try parseMemberName()
                let value = try parseValue(depth: 1)
                let duplicate: Bool
                if members.count < 16 {
                    let length = key.utf8.count
                    duplicate = members.contains { $0.key.utf8.count == length && $0.key == key }
                } else {
                    if names == nil { names = Set(members.map(\.key)) }
                    duplicate = !names!.insert(key).inserted
                }
                guard !duplicate else { throw JSONParseError("duplicate object key", at: keyOffset) }
                members.append((key, value))
                skipWhitespace()
                if consume(UInt8(ascii: ",")) { skipWhitespace(); continue }
                if consume(UInt8(ascii: "}")) { break }
                throw failure("expected ',' or '}' in object")
            }
        }
        skipWhitespace()
        guard position == input.count else { throw failure("unexpected characters after the value") }
        return members
    }

    // MARK: Values

    private mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard position < input.count else { throw failure("unexpected end of input, expected a value") }
        switch input[position] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        default: throw failure("unexpected character, expected a value")
        }
    }

    private mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= JSONValue.maxNestingDepth else { throw failure("nesting is deeper than \(JSONValue.maxNestingDepth)") }
        position += 1  // {
        skipWhitespace()
        if consume(UInt8(ascii: "}")) { return .object([:]) }
        var members: [String: JSONValue]
        // Growing a dictionary rehashes it, which costs more than parsing a token's claims,
        // so the first few objects (a JWT's claims, a JWKS's keys) start with room for up
        // to 16 members, as many as the remaining input could hold (a member takes at
        // least 5 bytes). Only a few: a generous start for every `{"a":1}` of a large
        // document would multiply its memory use a hundredfold.
        if presizedObjectsLeft > 0 {
            presizedObjectsLeft -= 1
            members = [String: JSONValue](minimumCapacity: min(16, (input.count - position) / 5 + 1))
        } else {
            members = [:]
        }
        while true {
            let (key, keyOffset) = try parseMemberName()
            // Duplicate names are refused: two readers of the same token must never disagree.
            guard members.updateValue(try parseValue(depth: depth), forKey: key) == nil else {
                throw JSONParseError("duplicate object key", at: keyOffset)
            }
            skipWhitespace()
            if consume(UInt8(ascii: ",")) { skipWhitespace(); continue }
            if consume(UInt8(ascii: "}")) { return .object(members) }
            throw failure("expected ',' or '}' in object")
        }
    }

    /// A member's name and the `:` after it (white space skipped), and where the name started; the value is next.
    private mutating func parseMemberName() throws(JSONParseError) -> (key: String, offset: Int) {
        guard position < input.count, input[position] == UInt8(ascii: "\"") else {
            throw failure("expected a string key in object")
        }
        let offset = position
        let key = try parseString()
        skipWhitespace()
        guard consume(UInt8(ascii: ":")) else { throw failure("expected ':' after object key") }
        skipWhitespace()
        return (key, offset)
    }

    private mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= JSONValue.maxNestingDepth else { throw failure("nesting is deeper than \(JSONValue.maxNestingDepth)") }
        position += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if consume(UInt8(ascii: "]")) { return .array(elements) }
        while true {
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            if consume(UInt8(ascii: ",")) { skipWhitespace(); continue }
            if consume(UInt8(ascii: "]")) { return .array(elements) }
            throw failure("expected ',' or ']' in array")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        guard input.count - position >= count else { throw failure("unexpected end of input in literal") }
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: count)
        for i in 0..<count where input[position + i] != expected[i] {
            throw failure("invalid literal")
        }
        position += count
    }

    // MARK: Strings

    private mutating func parseString() throws(JSONParseError) -> String {
        let start = position + 1
        var end = start
        var allBits: UInt8 = 0
        // Fast path: no escapes, so the string is a plain slice of the input.
        while end < input.count {
            let byte = input[end]
            allBits |= byte
            if byte == UInt8(ascii: "\"") {
                position = end + 1
                return try makeString(UnsafeBufferPointer(rebasing: input[start..<end]), isASCII: allBits < 0x80, at: start)
            }
            if byte == UInt8(ascii: "\\") { return try parseEscapedString(from: start, firstEscape: end) }
            if byte < 0x20 { throw JSONParseError("control character in string", at: end) }
            end += 1
        }
        throw JSONParseError("unterminated string", at: position)
    }

    private mutating func parseEscapedString(from start: Int, firstEscape: Int) throws(JSONParseError) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(firstEscape - start + 16)
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: input[start..<firstEscape]))
        position = firstEscape
        while position < input.count {
            let byte = input[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                return try bytes.withUnsafeBufferPointer { buffer throws(JSONParseError) in
                    try makeString(buffer, isASCII: false, at: start)
                }
            case UInt8(ascii: "\\"):
                try appendEscape(to: &bytes)
            case 0..<0x20:
                throw failure("control character in string")
            default:
                bytes.append(byte)
                position += 1
            }
        }
        throw JSONParseError("unterminated string", at: start - 1)
    }

    private mutating func appendEscape(to bytes: inout [UInt8]) throws(JSONParseError) {
        guard position + 1 < input.count else { throw failure("unterminated escape sequence") }
        let escaped = input[position + 1]
        position += 2
        switch escaped {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): bytes.append(escaped)
        case UInt8(ascii: "b"): bytes.append(0x08)
        case UInt8(ascii: "f"): bytes.append(0x0C)
        case UInt8(ascii: "n"): bytes.append(0x0A)
        case UInt8(ascii: "r"): bytes.append(0x0D)
        case UInt8(ascii: "t"): bytes.append(0x09)
        case UInt8(ascii: "u"): appendUTF8(of: try parseUnicodeEscape(), to: &bytes)
        default:
            position -= 2
            throw failure("invalid escape sequence")
        }
    }

    /// Reads the hex digits after `\u` (position is on them) and joins surrogate pairs.
    private mutating func parseUnicodeEscape() throws(JSONParseError) -> Unicode.Scalar {
        let escapeStart = position - 2
        let first = try parseHex4()
        switch first {
        case 0xD800...0xDBFF:
            guard position + 1 < input.count, input[position] == UInt8(ascii: "\\"), input[position + 1] == UInt8(ascii: "u") else {
                throw JSONParseError("high surrogate without a following low surrogate", at: escapeStart)
            }
            position += 2
            let second = try parseHex4()
            guard (0xDC00...0xDFFF).contains(second) else {
                throw JSONParseError("high surrogate without a following low surrogate", at: escapeStart)
            }
            return Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))!
        case 0xDC00...0xDFFF:
            throw JSONParseError("lone low surrogate", at: escapeStart)
        default:
            return Unicode.Scalar(first)!
        }
    }

    private mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        guard input.count - position >= 4 else { throw failure("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = input[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("invalid hex digit in \\u escape")
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }

    private func appendUTF8(of scalar: Unicode.Scalar, to bytes: inout [UInt8]) {
        for unit in UTF8.encode(scalar)! { bytes.append(unit) }
    }

    /// `String(validating:)` is generic and several times slower on short strings than
    /// validating here and building with `String(decoding:)`, which then repairs nothing.
    private func makeString(_ utf8: UnsafeBufferPointer<UInt8>, isASCII: Bool, at offset: Int) throws(JSONParseError) -> String {
        guard isASCII || UTF8Validation.isValid(utf8) else {
            throw JSONParseError("string is not valid UTF-8", at: offset)
        }
        return String(decoding: utf8, as: UTF8.self)
    }

    // MARK: Numbers

    private mutating func parseNumber() throws(JSONParseError) -> Double {
        let start = position
        let negative = consume(UInt8(ascii: "-"))
        var integer: UInt64 = 0
        var digitCount = 0
        guard position < input.count, isDigit(input[position]) else { throw failure("expected a digit") }
        if input[position] == UInt8(ascii: "0") {
            position += 1
            if position < input.count, isDigit(input[position]) { throw failure("leading zero in number") }
        } else {
            while position < input.count, isDigit(input[position]) {
                integer = integer &* 10 &+ UInt64(input[position] - UInt8(ascii: "0"))
                digitCount += 1
                position += 1
            }
        }
        var isInteger = true
        if consume(UInt8(ascii: ".")) {
            isInteger = false
            try skipDigits(after: "'.'")
        }
        if position < input.count, input[position] | 0x20 == UInt8(ascii: "e") {
            isInteger = false
            position += 1
            if position < input.count, input[position] == UInt8(ascii: "+") || input[position] == UInt8(ascii: "-") {
                position += 1
            }
            try skipDigits(after: "exponent")
        }
        // Integers of up to 15 digits are exact in a Double; everything else goes through strtod.
        if isInteger, digitCount <= 15 {
            let magnitude = Double(integer)
            return negative ? -magnitude : magnitude
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: input[start..<position]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw JSONParseError("number out of range", at: start) }
        return value
    }

    private mutating func skipDigits(after what: String) throws(JSONParseError) {
        guard position < input.count, isDigit(input[position]) else { throw failure("expected a digit after \(what)") }
        while position < input.count, isDigit(input[position]) { position += 1 }
    }

    // MARK: Helpers

    private func isDigit(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "0") < 10
    }

    private mutating func consume(_ byte: UInt8) -> Bool {
        guard position < input.count, input[position] == byte else { return false }
        position += 1
        return true
    }

    private mutating func skipWhitespace() {
        while position < input.count {
            switch input[position] {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): position += 1
            default: return
            }
        }
    }

    private func failure(_ reason: String) -> JSONParseError {
        JSONParseError(reason, at: position)
    }
}
